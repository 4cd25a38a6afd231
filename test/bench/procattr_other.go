//go:build !linux

package main

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// maxRSSKiB is not measured outside Linux, where ru_maxrss has other units.
func maxRSSKiB(*os.ProcessState) int64 { return 0 }

// vmHWMKiB is not measured outside Linux.
func vmHWMKiB(int) int64 { return 0 }
