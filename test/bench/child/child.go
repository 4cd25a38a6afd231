package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// StopTimeout is how long a process may take to exit after SIGTERM before it
// is killed.
const StopTimeout = 30 * time.Second

// Process is a runner the benchmark started, with its output in a file,
// watched for its peak RSS while it runs.
type Process struct {
	*proc.Child
	Log     string       // file with its stdout and stderr
	Started time.Time    // just before the process was started
	hwm     atomic.Int64 // the largest VmHWM read while it ran, KiB
}

// Start starts bin with args and env added to the benchmark's own
// environment, its output going to logFile.
func Start(name, logFile string, env []string, bin string, args ...string) (*Process, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy of the descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	started := time.Now()
	hc, err := proc.StartChild(name, cmd)
	if err != nil {
		return nil, err
	}
	c := &Process{Child: hc, Log: logFile, Started: started}
	go c.watchHWM()
	return c, nil
}

// Alive returns an error, with the end of its log, once the process has
// exited; for runners that must keep running.
func (c *Process) Alive() error {
	if done, err := c.Exited(); done {
		return c.failure(fmt.Sprintf("exited unexpectedly (%s)", proc.ExitText(err)))
	}
	return nil
}

// Failed returns an error once the process has exited with an error; for
// runners that exit when they are done.
func (c *Process) Failed() error {
	if done, err := c.Exited(); done && err != nil {
		return c.failure(proc.ExitText(err))
	}
	return nil
}

func (c *Process) failure(what string) error {
	return fmt.Errorf("%s (pid %d) %s; last lines of %s:\n%s", c.Name, c.PID(), what, c.Log, proc.LogTail(c.Log, 20))
}

// Wait waits up to timeout for the process to exit on its own.
func (c *Process) Wait(timeout time.Duration) error {
	select {
	case <-c.Done():
		if c.Err() != nil {
			return c.failure(proc.ExitText(c.Err()))
		}
		return nil
	case <-time.After(timeout):
		if err := c.Stop(); err != nil {
			return err
		}
		return c.failure(fmt.Sprintf("did not exit within %v; stopped it", timeout))
	}
}

// Stop sends SIGTERM, waits up to StopTimeout for the process to exit,
// then kills it. It returns an error unless the process exited with
// status 0. Stopping a process that has exited returns how it exited.
func (c *Process) Stop() error {
	if done, err := c.Exited(); done {
		if err != nil {
			return c.failure(proc.ExitText(err))
		}
		return nil
	}
	err := c.Child.Stop(StopTimeout)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, proc.ErrKilled):
		return c.failure(fmt.Sprintf("did not stop within %v of SIGTERM; killed it", StopTimeout))
	case errors.As(err, &exit):
		return c.failure("exited with " + proc.ExitText(err) + " on SIGTERM")
	default:
		return err
	}
}

// hwmInterval is how often a child's VmHWM is read.
const hwmInterval = 50 * time.Millisecond

// watchHWM reads the process's peak RSS (VmHWM, a high-water mark) until
// it exits. A high-water mark read any time after the peak holds it, so
// only growth in the last interval before the exit can be missed.
func (c *Process) watchHWM() {
	t := time.NewTicker(hwmInterval)
	defer t.Stop()
	for {
		if kib := VmHWMKiB(c.PID()); kib > c.hwm.Load() {
			c.hwm.Store(kib)
		}
		select {
		case <-c.Done():
			return
		case <-t.C:
		}
	}
}

// PeakRSS is the process's peak resident set size in KiB, once it has
// exited; 0 if unknown.
//
// It is the VmHWM read while the process ran, not the ru_maxrss of its
// exit: os/exec starts children with vfork, and Linux carries the parent's
// peak RSS into a vforked child's ru_maxrss at exec, so every child would
// report at least the benchmark's own peak (a /bin/sleep started from a
// process holding 200 MiB reports 200 MiB).
func (c *Process) PeakRSS() int64 {
	if done, _ := c.Exited(); !done {
		return 0
	}
	return c.hwm.Load()
}

// CPU is the CPU time, user and system, the process has used: so far
// while it runs, in all once it has exited.
func (c *Process) CPU() float64 {
	if done, _ := c.Exited(); done {
		ps := c.Cmd.ProcessState
		return (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	return CPUSeconds(c.PID())
}

// RSS is the process's resident set size now, in KiB; 0 once it has
// exited.
func (c *Process) RSS() int64 { return VmRSSKiB(c.PID()) }
