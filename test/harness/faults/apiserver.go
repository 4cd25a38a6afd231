package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// apiServerTimeout bounds how long kube-apiserver may take to stop, and to
// answer /readyz once started; envtest allows each 20 s.
const apiServerTimeout = 60 * time.Second

// APIServer is the control plane's kube-apiserver as an operator sees
// it: a process, found by its binary and secure port among this process's
// children, to stop with SIGTERM and start again with the same command
// line. It reads the process from /proc, so it works on Linux only.
//
// envtest cannot restart its API server in place: its Start writes new
// serving certificates into a fresh directory on a new port, which breaks
// every kubeconfig written so far. Running the recorded command line again
// keeps the address, the certificates (the working files stay in envtest's
// directory, removed only when the control plane stops) and etcd's data.
type APIServer struct {
	// binary and port find the process envtest started: a child of this
	// process running binary with --secure-port=port.
	binary, port string
	// log is the file a restarted process writes its stdout and stderr to.
	log string
	// stopped is set once Stop has stopped the process envtest started.
	stopped *apiServerProcess
}

// NewAPIServer returns the kube-apiserver envtest started from binary,
// serving on securePort; once restarted, its output goes to logFile.
func NewAPIServer(binary, securePort, logFile string) *APIServer {
	return &APIServer{binary: binary, port: securePort, log: logFile}
}

// apiServerProcess is the command line of the control plane's
// kube-apiserver, taken from the process envtest started, and the process
// run with it after a restart.
type apiServerProcess struct {
	args    []string // args[0] is the binary, as envtest ran it
	dir     string
	environ []string

	// child is the restarted process while it runs.
	child *proc.Child
}

// Stop stops kube-apiserver as an operator would: SIGTERM to its process,
// by PID, then waiting for it to exit. etcd and the working files stay,
// so that Start can bring the same server back.
func (a *APIServer) Stop(ctx context.Context) error {
	if a.stopped != nil {
		if a.stopped.child == nil {
			return errors.New("kube-apiserver is stopped already")
		}
		return a.stopped.stop()
	}
	pid, start, err := a.find()
	if err != nil {
		return err
	}
	p, err := readProcess(pid)
	if err != nil {
		return err
	}
	a.stopped = p
	return terminate(ctx, pid, start)
}

// terminate sends SIGTERM to process pid, which started at start, and
// waits for it to exit; after apiServerTimeout it sends SIGKILL. The
// process is envtest's child and envtest reaps it, so /proc tells when it
// has exited.
func terminate(ctx context.Context, pid int, start string) error {
	process, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer process.Release()
	if err := process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop kube-apiserver (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, apiServerTimeout)
	defer cancel()
	for !exited(pid, start) {
		select {
		case <-ctx.Done():
			_ = process.Kill()
			return fmt.Errorf("kube-apiserver (pid %d) killed: still running after SIGTERM: %w", pid, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Start starts kube-apiserver again after Stop, with the same binary,
// arguments, working directory and environment, and waits until /readyz
// answers through cfg. Close stops it.
func (a *APIServer) Start(ctx context.Context, cfg *rest.Config) error {
	p := a.stopped
	switch {
	case p == nil:
		return errors.New("kube-apiserver was not stopped: call StopAPIServer first")
	case p.child != nil:
		return errors.New("kube-apiserver is running already")
	}
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir, cmd.Env = p.dir, p.environ
	child, err := proc.StartChildWithLog("kube-apiserver", cmd, a.log)
	if err != nil {
		return err
	}
	p.child = child
	return a.waitReady(ctx, cfg)
}

// StartWith is Start with flags changed, by name without the dashes: a
// flag with a value replaces the flag of that name or is added, one with
// the empty value is removed. Later restarts keep the change, as a
// cluster upgraded keeps its new flags.
func (a *APIServer) StartWith(ctx context.Context, cfg *rest.Config, flags map[string]string) error {
	if p := a.stopped; p != nil && p.child == nil {
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
	return a.Start(ctx, cfg)
}

// waitReady polls /readyz until it answers ok, the restarted process
// exits, or apiServerTimeout passes.
func (a *APIServer) waitReady(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, apiServerTimeout)
	defer cancel()
	p := a.stopped
	for {
		try, cancelTry := context.WithTimeout(ctx, 2*time.Second)
		_, err := cs.RESTClient().Get().AbsPath("/readyz").DoRaw(try)
		cancelTry()
		if err == nil {
			return nil
		}
		select {
		case <-p.child.Done():
			return fmt.Errorf("kube-apiserver exited on start: %s", proc.LogTail(a.log, 20))
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %w (last: %v): %s", ctx.Err(), err, proc.LogTail(a.log, 20))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the kube-apiserver that Start restarted, if it runs;
// envtest stops the rest of the control plane.
func (a *APIServer) Close() error {
	if a.stopped == nil || a.stopped.child == nil {
		return nil
	}
	return a.stopped.stop()
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

// PID is the process ID of kube-apiserver, for reading its memory from
// /proc.
func (a *APIServer) PID() (int, error) {
	pid, _, err := a.find()
	return pid, err
}

// find returns the PID and start time of kube-apiserver: a child of this
// process running a.binary, serving on a.port.
func (a *APIServer) find() (pid int, start string, err error) {
	if a.port == "" {
		return 0, "", errors.New("kube-apiserver not started")
	}
	want := "--secure-port=" + a.port
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
		if err != nil || ppid != os.Getpid() || !sameFile(fmt.Sprintf("/proc/%d/exe", id), a.binary) {
			continue
		}
		args, err := procArgs(id)
		if err == nil && slices.Contains(args, want) {
			found = append(found, id)
			pid, start = id, st
		}
	}
	if len(found) != 1 {
		return 0, "", fmt.Errorf("find kube-apiserver: %d child processes of %s with %s, want 1: %v", len(found), a.binary, want, found)
	}
	return pid, start, nil
}
