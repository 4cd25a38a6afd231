package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// startChild starts cmd in its own process group, so that a Ctrl-C in the
// terminal reaches only the demo, which then stops its children in order.
func startChild(name string, cmd *exec.Cmd) (*proc.Child, error) {
	cmd.SysProcAttr = sysProcAttr()
	return proc.StartChild(name, cmd)
}

// stop stops c, waiting up to timeout before it kills it. It returns how
// the process exited, or that it was killed; nil if it had exited before,
// which died reports.
func stop(c *proc.Child, timeout time.Duration) error {
	if done, err := c.Exited(); done {
		logf("  %s (pid %d) had already exited: %v", c.Name, c.PID(), proc.ExitText(err))
		return nil
	}
	logf("Stopping %s (pid %d) with SIGTERM", c.Name, c.PID())
	return c.Stop(timeout)
}

// startKCM starts kube-controller-manager from assets, logging to logFile.
func startKCM(assets, kubeconfig, logFile string) (*proc.Child, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy of the descriptor
	cmd := exec.Command(filepath.Join(assets, "kube-controller-manager"), h.ControllerManagerArgs(kubeconfig)...)
	cmd.Stdout, cmd.Stderr = f, f
	return startChild("kube-controller-manager", cmd)
}

// controllerArgs are the kube-annotator binary's arguments.
func controllerArgs(rulesFile, kubeconfig, verbosity string) []string {
	return []string{"run", "--rules", rulesFile, "--kubeconfig", kubeconfig, "-v", verbosity}
}

// startController starts the kube-annotator binary against kubeconfig, its
// output on w.
func startController(binary, rulesFile, kubeconfig, verbosity string, w io.Writer) (*proc.Child, error) {
	cmd := exec.Command(binary, controllerArgs(rulesFile, kubeconfig, verbosity)...)
	cmd.Stdout, cmd.Stderr = w, w
	return startChild("kube-annotator", cmd)
}

// prefixWriter writes each line it is given to w with a prefix, leaving
// out lines that contain any of skip. Once a write to w fails (the reader
// of a pipe is gone), it drops what it is given, but takes it all: the
// child writing to it must not block on a full pipe while it stops.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	skip   []string
	buf    []byte
	failed bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		return len(b), nil
	}
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
			p.failed, p.buf = true, nil
			return len(b), nil
		}
	}
}
