package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process the demo started, and so the only kind it stops: by
// its own PID, never by name.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // cmd.Wait's result, set before done is closed
}

// startChild starts cmd in its own process group, so that a Ctrl-C in the
// terminal reaches only the demo, which then stops its children in order.
func startChild(name string, cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the process has exited, and how.
func (c *child) exited() (bool, error) {
	select {
	case <-c.done:
		return true, c.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM and waits up to timeout for the process to exit, then
// sends SIGKILL. It returns how the process exited, or that it was killed;
// nil if it had exited before, which died reports.
func (c *child) stop(timeout time.Duration) error {
	if done, err := c.exited(); done {
		logf("  %s (pid %d) had already exited: %v", c.name, c.cmd.Process.Pid, exitText(err))
		return nil
	}
	logf("Stopping %s (pid %d) with SIGTERM", c.name, c.cmd.Process.Pid)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s (pid %d): %w", c.name, c.cmd.Process.Pid, err)
	}
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s (pid %d) did not stop within %v of SIGTERM; killed it", c.name, c.cmd.Process.Pid, timeout)
	}
}

// exitText describes a cmd.Wait result.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// kcmControllers are the kube-controller-manager controllers the demo
// needs: Deployments make ReplicaSets, ReplicaSets make Pods, new
// namespaces get their "default" ServiceAccount, deleted namespaces are
// emptied, and deleting a Deployment by hand removes its ReplicaSets and
// Pods.
var kcmControllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"serviceaccount-controller",
	"namespace-controller",
	"garbage-collector-controller",
}

// kcmArgs are kube-controller-manager's flags: the admin kubeconfig for
// every controller, no leader election, and no HTTPS endpoint (secure port
// 0), so that it opens no port at all, bound to loopback if it ever did.
func kcmArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--controllers=" + strings.Join(kcmControllers, ","),
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
	}
}

// startKCM starts kube-controller-manager from assets, logging to logFile.
func startKCM(assets, kubeconfig, logFile string) (*child, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy of the descriptor
	cmd := exec.Command(filepath.Join(assets, "kube-controller-manager"), kcmArgs(kubeconfig)...)
	cmd.Stdout, cmd.Stderr = f, f
	return startChild("kube-controller-manager", cmd)
}

// controllerArgs are the kube-annotator binary's arguments.
func controllerArgs(rulesFile, kubeconfig, verbosity string) []string {
	return []string{"run", "--rules", rulesFile, "--kubeconfig", kubeconfig, "-v", verbosity}
}

// startController starts the kube-annotator binary against kubeconfig, its
// output on w.
func startController(binary, rulesFile, kubeconfig, verbosity string, w io.Writer) (*child, error) {
	cmd := exec.Command(binary, controllerArgs(rulesFile, kubeconfig, verbosity)...)
	cmd.Stdout, cmd.Stderr = w, w
	return startChild("kube-annotator", cmd)
}

// prefixWriter writes each line it is given to w with a prefix, leaving
// out lines that contain any of skip.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	skip   []string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := p.buf[:i]
		p.buf = p.buf[i+1:]
		if slices.ContainsFunc(p.skip, func(s string) bool { return bytes.Contains(line, []byte(s)) }) {
			continue
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, line); err != nil {
			return len(b), err
		}
	}
}
