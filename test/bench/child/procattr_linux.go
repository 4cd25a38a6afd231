package child

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts a child in its own process group, away from the
// terminal's Ctrl-C (the benchmark stops its children itself), and has the
// kernel send it SIGTERM should the benchmark die without stopping it
// (killed with SIGKILL, say).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// VmHWMKiB is a running process's peak resident set size, VmHWM in
// /proc/<pid>/status; 0 once it has gone.
func VmHWMKiB(pid int) int64 { return statusKiB(pid, "VmHWM:") }

// VmRSSKiB is a running process's resident set size, VmRSS in
// /proc/<pid>/status; 0 once it has gone.
func VmRSSKiB(pid int) int64 { return statusKiB(pid, "VmRSS:") }

// statusKiB is the field of /proc/<pid>/status that opens with name, in
// KiB; 0 if the process has gone.
func statusKiB(pid int, name string) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			kib, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kib
		}
	}
	return 0
}

// clockTicks is the unit of the CPU times in /proc/<pid>/stat (USER_HZ),
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// CPUSeconds is the CPU time a running process has used so far, user and
// system, from /proc/<pid>/stat; 0 if it has gone.
func CPUSeconds(pid int) float64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis. utime and stime are fields 14 and 15.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return float64(utime+stime) / clockTicks
}
