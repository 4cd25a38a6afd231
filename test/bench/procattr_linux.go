package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts a child in its own process group, away from the
// terminal's Ctrl-C (the benchmark stops its children itself), and has the
// kernel send it SIGTERM should the benchmark die without stopping it
// (killed with SIGKILL, say).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// vmHWMKiB is a running process's peak resident set size, VmHWM in
// /proc/<pid>/status; 0 once it has gone.
func vmHWMKiB(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kib, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kib
		}
	}
	return 0
}
