package main

import (
	"os"
	"syscall"
)

// sysProcAttr puts a child in its own process group, away from the
// terminal's Ctrl-C (the benchmark stops its children itself), and has the
// kernel send it SIGTERM should the benchmark die without stopping it
// (killed with SIGKILL, say).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// maxRSSKiB is a process's peak resident set size; Linux reports it in KiB.
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
