//go:build !linux

package main

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

// vmHWMKiB is not measured outside Linux.
func vmHWMKiB(int) int64 { return 0 }

// vmRSSKiB is not measured outside Linux.
func vmRSSKiB(int) int64 { return 0 }

// cpuSeconds is not measured outside Linux.
func cpuSeconds(int) float64 { return 0 }
