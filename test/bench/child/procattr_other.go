//go:build !linux

package child

import (
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// VmHWMKiB is not measured outside Linux.
func VmHWMKiB(int) int64 { return 0 }

// VmRSSKiB is not measured outside Linux.
func VmRSSKiB(int) int64 { return 0 }

// CPUSeconds is not measured outside Linux.
func CPUSeconds(int) float64 { return 0 }
