package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Child is a process that test code started, and so the only kind it
// stops: by its own PID, never by name.
type Child struct {
	// Name names the process in messages.
	Name string
	// Cmd is the started command.
	Cmd *exec.Cmd

	done chan struct{} // closed once the process has exited
	err  error         // Cmd.Wait's result, set before done is closed
}

// ErrKilled is in Stop's error when the process did not exit on SIGTERM
// in time and was killed.
var ErrKilled = errors.New("killed it")

// StartChild starts cmd and waits for it in the background.
func StartChild(name string, cmd *exec.Cmd) (*Child, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &Child{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// PID is the process's ID.
func (c *Child) PID() int { return c.Cmd.Process.Pid }

// Done is closed once the process has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Err is how the process exited (Cmd.Wait's result), once Done is closed.
func (c *Child) Err() error { return c.err }

// Exited reports whether the process has exited, and how.
func (c *Child) Exited() (bool, error) {
	select {
	case <-c.done:
		return true, c.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM and waits up to timeout for the process to exit, then
// kills it. It returns how the process exited (Cmd.Wait's result), or an
// error wrapping ErrKilled. Stopping a process that has exited returns how
// it exited.
func (c *Child) Stop(timeout time.Duration) error {
	if done, err := c.Exited(); done {
		return err
	}
	if err := c.Cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s (pid %d): %w", c.Name, c.PID(), err)
	}
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		_ = c.Cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s (pid %d) did not stop within %v of SIGTERM; %w", c.Name, c.PID(), timeout, ErrKilled)
	}
}

// ExitText describes how a process exited, from Cmd.Wait's result.
func ExitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
