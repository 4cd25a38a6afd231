package main

import "syscall"

// sysProcAttr puts a child in its own process group, away from the
// terminal's Ctrl-C, and has the kernel send it SIGTERM should the demo die
// without cleaning up (killed with SIGKILL, say).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
