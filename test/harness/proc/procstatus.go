package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ProcStatusKiB reads a memory field of /proc/<pid>/status, e.g. VmRSS or
// VmHWM (the peak resident set size), in KiB.
func ProcStatusKiB(pid int, field string) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			return strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
