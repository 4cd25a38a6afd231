package proc

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
	// Log is the file that holds the process's stdout and stderr when
	// StartChildWithLog started it; "" otherwise.
	Log string

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

// StartChildWithLog is StartChild with cmd's stdout and stderr appended
// to the file logFile, created if need be; ReadLog reads it.
func StartChildWithLog(name string, cmd *exec.Cmd, logFile string) (*Child, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer f.Close() // the child has its own copy of the descriptor
	cmd.Stdout, cmd.Stderr = f, f
	c, err := StartChild(name, cmd)
	if err != nil {
		return nil, err
	}
	c.Log = logFile
	return c, nil
}

// ReadLog returns what the process has written to its Log so far.
func (c *Child) ReadLog() (string, error) {
	if c.Log == "" {
		return "", fmt.Errorf("%s (pid %d) has no log: not started by StartChildWithLog", c.Name, c.PID())
	}
	b, err := os.ReadFile(c.Log)
	if err != nil {
		return "", fmt.Errorf("read the log of %s: %w", c.Name, err)
	}
	return string(b), nil
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

// Signal sends sig to the process, by its PID. Once the process has
// exited, the error wraps os.ErrProcessDone.
func (c *Child) Signal(sig os.Signal) error {
	if err := c.Cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s (pid %d): %w", sig, c.Name, c.PID(), err)
	}
	return nil
}

// Stop sends SIGTERM and waits up to timeout for the process to exit, then
// kills it. It returns how the process exited (Cmd.Wait's result), or an
// error wrapping ErrKilled. Stopping a process that has exited returns how
// it exited.
func (c *Child) Stop(timeout time.Duration) error {
	if done, err := c.Exited(); done {
		return err
	}
	if err := c.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
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
