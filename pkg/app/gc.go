package app

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// defaultGCPercent is the garbage collector's GOGC for run when the
// environment sets none and no memory limit is known. The controller's
// live heap is mostly its cache: long-lived and small. Collecting once the
// heap has grown by half of it, rather than by all of it (Go's default),
// keeps the peak RSS closer to the live heap through the bursts of garbage
// that the initial sync and convergence make, for some CPU.
const defaultGCPercent = 50

// limitedGCPercent is GOGC when a memory limit is known: the runtime then
// collects harder as the heap nears the limit, so the peak needs no low
// GOGC to stay under it, and collecting half as often saves CPU while
// converging.
const limitedGCPercent = 100

// memoryLimitRatio is the share of the container's memory limit given to
// the runtime as its soft limit when GOMEMLIMIT is unset, leaving the rest
// to what the runtime does not count (the binary's mapped code, stacks).
const memoryLimitRatio = 0.9

// cgroupMemoryFiles are where the container's memory limit is read: cgroup
// v2, then v1, as seen from inside its cgroup namespace.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// tuneGC sets the garbage collector's targets unless the environment, read
// through lookupEnv, sets them. Without GOMEMLIMIT, a memory limit that
// readLimit finds sets the soft limit to memoryLimitRatio of it. Without
// GOGC, GOGC is limitedGCPercent when a soft limit is in force (from
// either; GOMEMLIMIT=off is none), else defaultGCPercent.
func tuneGC(lookupEnv func(string) (string, bool), readLimit func() (int64, bool)) {
	if _, set := lookupEnv("GOMEMLIMIT"); !set {
		if l, ok := readLimit(); ok {
			debug.SetMemoryLimit(int64(float64(l) * memoryLimitRatio))
		}
	}
	if _, set := lookupEnv("GOGC"); !set {
		percent := defaultGCPercent
		if debug.SetMemoryLimit(-1) < math.MaxInt64 { // -1 reads the limit
			percent = limitedGCPercent
		}
		debug.SetGCPercent(percent)
	}
}

// cgroupMemoryLimit returns the memory limit of the process's cgroup, and
// false when it has none or none can be read.
func cgroupMemoryLimit() (int64, bool) {
	for _, f := range cgroupMemoryFiles {
		if b, err := os.ReadFile(f); err == nil {
			return parseMemoryLimit(string(b))
		}
	}
	return 0, false
}

// parseMemoryLimit parses a cgroup memory limit file's content: "max"
// (v2) or a value near the largest int64 (v1) is no limit.
func parseMemoryLimit(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}
