//go:build unix && !linux

package main

import "syscall"

// sysProcAttr puts a child in its own process group, away from the
// terminal's Ctrl-C; the demo stops it itself.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
