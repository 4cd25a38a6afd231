//go:build !linux

package main

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

// vmHWMKiB is not measured outside Linux.
func vmHWMKiB(int) int64 { return 0 }
