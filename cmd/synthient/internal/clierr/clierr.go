// Package clierr is how the command fails: its exit codes, the error
// that carries one, and the one line an error is printed as.
package clierr

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/synthient-go/synthient"
)

// Exit codes.
const (
	OK         = 0
	Failure    = 1   // anything not classified below
	Usage      = 2   // usage and invalid arguments
	API        = 3   // the API answered with an error, the credit budget refused a lookup (or addresses of a batch were not looked up)
	Connection = 4   // connection and timeout errors
	Interrupt  = 130 // Ctrl-C or SIGTERM
	// BrokenPipe is the code of a command whose stdout closed early (a
	// pipe into head): 128 + SIGPIPE, the status a shell shows for a
	// standard tool that SIGPIPE ended. The command prints nothing for it,
	// and main ends the process with SIGPIPE itself.
	BrokenPipe = 141
)

// Error carries an exit code with the error to print; Hint asks for the
// pointer to the command's --help (a command-line mistake).
type Error struct {
	Code int
	Err  error
	Hint bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef returns a usage error (exit 2) of the formatted message.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// New returns err with the exit code code.
func New(code int, err error) error { return &Error{Code: code, Err: err} }

// ExitCode classifies an error.
func ExitCode(err error) int {
	var ee *Error
	var apiErr *synthient.APIError
	var connErr *synthient.ConnectionError
	var decErr *synthient.DecodeError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return Interrupt
	case errors.Is(err, synthient.ErrInvalidArgument), IsCobraUsage(err), UnusableFile(err):
		return Usage
	case errors.Is(err, synthient.ErrCreditBudget): // not sent: the budget (--max-credits) refused it
		return API
	case errors.As(err, &apiErr), errors.As(err, &decErr), errors.Is(err, synthient.ErrChecksumMismatch),
		errors.Is(err, synthient.ErrSizeMismatch), errors.Is(err, synthient.ErrSizeUnknown):
		return API
	case errors.As(err, &connErr), errors.Is(err, context.DeadlineExceeded):
		return Connection
	}
	return Failure
}

// UnusableFile reports a file argument that cannot be used, found before
// anything was sent: --out over an existing file, in a missing directory,
// without permission, or where the SDK could not create its temporary file
// (not a directory, a loop of links, a read-only file system). A file
// error after a request was sent (no space left, or a file that appeared
// at --out during the download) is not a usage error.
func UnusableFile(err error) bool {
	var base *synthient.Error
	fromSDK := errors.As(err, &base)
	if fromSDK && base.Attempts > 0 {
		return false
	}
	var pathErr *fs.PathError
	return fromSDK && errors.As(err, &pathErr) ||
		errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

// WantsHelpHint reports a command-line mistake, as opposed to bad data.
func WantsHelpHint(err error) bool {
	var ee *Error
	if errors.As(err, &ee) {
		return ee.Hint
	}
	return IsCobraUsage(err)
}

// IsCobraUsage recognises cobra's argument and command errors, which it
// returns as plain errors; never an error of a request (a TLS failure's
// text can say "received").
func IsCobraUsage(err error) bool {
	var ee *Error
	if errors.As(err, &ee) {
		return ee.Code == Usage
	}
	var base *synthient.Error
	if errors.As(err, &base) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
