package faults

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// readProcess records the command line, working directory and environment
// of process pid.
func readProcess(pid int) (*apiServerProcess, error) {
	args, err := procArgs(pid)
	if err != nil {
		return nil, err
	}
	dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return nil, fmt.Errorf("read kube-apiserver's working directory: %w", err)
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, fmt.Errorf("read kube-apiserver's environment: %w", err)
	}
	return &apiServerProcess{args: args, dir: dir, environ: splitNUL(env)}, nil
}

// procArgs reads a process's command line.
func procArgs(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	args := splitNUL(b)
	if len(args) == 0 {
		return nil, fmt.Errorf("process %d: empty command line", pid)
	}
	return args, nil
}

// procStat reads a process's state, parent PID and start time (in clock
// ticks since boot) from /proc/<pid>/stat.
func procStat(pid int) (state string, ppid int, start string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, "", err
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis, from field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, "", fmt.Errorf("process %d: malformed stat %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", 0, "", fmt.Errorf("process %d: malformed stat %q", pid, b)
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0], ppid, f[19], err
}

// exited tells whether the process pid that started at start has exited:
// it is gone, a zombie, or its PID now names another process.
func exited(pid int, start string) bool {
	state, _, st, err := procStat(pid)
	return err != nil || state == "Z" || st != start
}

// sameFile tells whether the paths a and b name one file.
func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// splitNUL splits the NUL-terminated strings of a /proc file.
func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	var out []string
	for _, s := range bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0}) {
		out = append(out, string(s))
	}
	return out
}
