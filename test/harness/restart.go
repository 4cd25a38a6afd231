package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// apiServerTimeout bounds how long kube-apiserver may take to stop, and to
// answer /readyz once started; envtest allows each 20 s.
const apiServerTimeout = 60 * time.Second

// apiServerProcess is the command line of the control plane's
// kube-apiserver, taken from the process envtest started, and the process
// the harness runs with it after a restart.
//
// envtest cannot restart its API server in place: its Start writes new
// serving certificates into a fresh directory on a new port, which breaks
// every kubeconfig written so far. Running the recorded command line again
// keeps the address, the certificates (the working files stay in envtest's
// directory, removed only by Env.Stop) and etcd's data.
type apiServerProcess struct {
	args    []string // args[0] is the binary, as envtest ran it
	dir     string
	environ []string
	log     string // the restarted process's stdout and stderr

	// child is the restarted process while it runs.
	child *Child
}

// StopAPIServer stops the control plane's kube-apiserver as an operator
// would: SIGTERM to its process, by PID, then waiting for it to exit. etcd
// and the working files stay, so that StartAPIServer can bring the same
// server back. It reads the process's command line from /proc, so it works
// on Linux only.
func (e *Env) StopAPIServer(ctx context.Context) error {
	if e.apiserver != nil {
		if e.apiserver.child == nil {
			return errors.New("kube-apiserver is stopped already")
		}
		return e.apiserver.stop()
	}
	pid, start, err := e.findAPIServer()
	if err != nil {
		return err
	}
	p, err := readProcess(pid)
	if err != nil {
		return err
	}
	p.log = filepath.Join(e.dir, "kube-apiserver.log")
	e.apiserver = p
	return terminate(ctx, pid, start)
}

// terminate sends SIGTERM to process pid, which started at start, and
// waits for it to exit; after apiServerTimeout it sends SIGKILL. The
// process is envtest's child and envtest reaps it, so /proc tells when it
// has exited.
func terminate(ctx context.Context, pid int, start string) error {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer proc.Release()
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop kube-apiserver (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, apiServerTimeout)
	defer cancel()
	for !exited(pid, start) {
		select {
		case <-ctx.Done():
			_ = proc.Kill()
			return fmt.Errorf("kube-apiserver (pid %d) killed: still running after SIGTERM: %w", pid, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, with the
// same binary, arguments, working directory and environment, and waits
// until /readyz answers through Config. Env.Stop stops it.
func (e *Env) StartAPIServer(ctx context.Context) error {
	p := e.apiserver
	switch {
	case p == nil:
		return errors.New("kube-apiserver was not stopped: call StopAPIServer first")
	case p.child != nil:
		return errors.New("kube-apiserver is running already")
	}
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir, cmd.Env = p.dir, p.environ
	child, err := StartChildWithLog("kube-apiserver", cmd, p.log)
	if err != nil {
		return err
	}
	p.child = child
	return e.waitAPIServerReady(ctx)
}

// StartAPIServerWith is StartAPIServer with flags changed, by name without
// the dashes: a flag with a value replaces the flag of that name or is
// added, one with the empty value is removed. Later restarts keep the
// change, as a cluster upgraded keeps its new flags.
func (e *Env) StartAPIServerWith(ctx context.Context, flags map[string]string) error {
	if p := e.apiserver; p != nil && p.child == nil {
		args := []string{p.args[0]}
		for _, arg := range p.args[1:] {
			name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			if _, changed := flags[name]; !changed {
				args = append(args, arg)
			}
		}
		for name, value := range flags {
			if value != "" {
				args = append(args, "--"+name+"="+value)
			}
		}
		p.args = args
	}
	return e.StartAPIServer(ctx)
}

// waitAPIServerReady polls /readyz until it answers ok, the restarted
// process exits, or apiServerTimeout passes.
func (e *Env) waitAPIServerReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, apiServerTimeout)
	defer cancel()
	p := e.apiserver
	for {
		try, cancelTry := context.WithTimeout(ctx, 2*time.Second)
		_, err := cs.RESTClient().Get().AbsPath("/readyz").DoRaw(try)
		cancelTry()
		if err == nil {
			return nil
		}
		select {
		case <-p.child.Done():
			return fmt.Errorf("kube-apiserver exited on start: %s", LogTail(p.log, 20))
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %w (last: %v): %s", ctx.Err(), err, LogTail(p.log, 20))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopAPIServer stops the kube-apiserver the harness restarted, if it
// runs; envtest stops the rest of the control plane.
func (e *Env) stopAPIServer() error {
	if e.apiserver == nil || e.apiserver.child == nil {
		return nil
	}
	return e.apiserver.stop()
}

// stop sends SIGTERM to the restarted process and waits for it to exit,
// killing it after apiServerTimeout. How it exited on SIGTERM does not
// matter.
func (p *apiServerProcess) stop() error {
	defer func() { p.child = nil }()
	var exit *exec.ExitError
	if err := p.child.Stop(apiServerTimeout); err != nil && !errors.As(err, &exit) {
		return err
	}
	return nil
}

// findAPIServer returns the PID and start time of the kube-apiserver
// envtest started for e: a child of this process, serving on e's secure
// port.
func (e *Env) findAPIServer() (pid int, start string, err error) {
	s := e.env.ControlPlane.GetAPIServer()
	if s.SecureServing.Port == "" {
		return 0, "", errors.New("kube-apiserver not started")
	}
	want := "--secure-port=" + s.SecureServing.Port
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, "", fmt.Errorf("find kube-apiserver: %w", err)
	}
	var found []int
	for _, d := range entries {
		id, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		_, ppid, st, err := procStat(id)
		if err != nil || ppid != os.Getpid() || !sameFile(fmt.Sprintf("/proc/%d/exe", id), s.Path) {
			continue
		}
		args, err := procArgs(id)
		if err == nil && slices.Contains(args, want) {
			found = append(found, id)
			pid, start = id, st
		}
	}
	if len(found) != 1 {
		return 0, "", fmt.Errorf("find kube-apiserver: %d child processes of %s with %s, want 1: %v", len(found), s.Path, want, found)
	}
	return pid, start, nil
}

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
