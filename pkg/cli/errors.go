package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// usageError is a bad invocation of a command: a flag or an argument that
// cannot be used. Main prints it as kubectl does, the error and then where
// the command's usage is, and exits 2; nothing has been done.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usageErrorf is a usageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitError ends a command with an exit code of its own: diff's, kubectl
// diff's; or a failure that the command's output has said already, with no
// error to print. err, when set, is printed as any other error.
type exitError struct {
	code int
	err  error
}

func (x *exitError) Error() string {
	if x.err == nil {
		return fmt.Sprintf("exit status %d", x.code)
	}
	return x.err.Error()
}

func (x *exitError) Unwrap() error { return x.err }

// exitCode ends a command with code, printing nothing.
func exitCode(code int) error { return &exitError{code: code} }

// exit prints err, what cmd returned, in the one format of its kind and
// returns the process's exit code: 0 without an error; 2 for a usage error
// or any error before the command's own code started (an unknown command
// or flag, a bad flag value or argument); the code of an exitError; else 1.
func (e *env) exit(cmd *cobra.Command, err error) int {
	var usage usageError
	var exit *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage) || !e.ran:
		if cmd.Name() == "help" && cmd.HasParent() {
			cmd = cmd.Parent() // help COMMAND: the command is the root's
		}
		fmt.Fprintf(e.Err, "error: %v\nSee '%s --help'.\n", err, cmd.CommandPath())
		return 2
	case errors.As(err, &exit):
		if exit.err != nil {
			fmt.Fprintf(e.Err, "error: %v\n", exit.err)
		}
		return exit.code
	}
	fmt.Fprintf(e.Err, "error: %v\n", err)
	return 1
}
