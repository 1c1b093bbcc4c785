// Command synthient is the command-line client of the Synthient API: IP and
// domain lookups, account details, exports and real-time streams, plus a
// local fake API and a guided demo of the SDK's retry behaviour.
//
//	synthient demo                     # the guided tour, on an in-process fake API
//	synthient lookup ip 8.8.8.8        # needs SYNTHIENT_API_KEY, or --fake
//
// See docs/cli.md for every command. The commands live in internal/cmd,
// one package per command group and one file per command; what they share
// is in internal/cmdutil, and the code that knows nothing of cobra
// (output formats, escapes and redaction, address input, the bulk run,
// the trace printer) in the other packages under internal.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/root"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// interruptGrace is how long a command has, after the first SIGINT or
// SIGTERM, to stop and report before the process exits 130 all the same.
// (A variable for the tests, which run the command with another.)
var interruptGrace = 3 * time.Second

func main() {
	// A closed pipe (synthient ... | head -1) is a write error that the
	// command handles: it stops sending, accounts for what it read, and
	// only then ends as SIGPIPE would have ended it (exitBrokenPipe). With
	// SIGPIPE notified (to a channel nobody reads: the signal is dropped),
	// the Go runtime returns EPIPE for a write to stdout instead of ending
	// the program there.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := notifyInterrupt(os.Stderr)
	code := root.Run(ctx, os.Args[1:], root.Env{
		System: iostreams.System{
			Stdin:            os.Stdin,
			Stdout:           os.Stdout,
			Stderr:           os.Stderr,
			Getenv:           os.Getenv,
			StdinIsTerminal:  func() bool { return term.IsTerminal(int(os.Stdin.Fd())) },
			StdoutIsTerminal: func() bool { return term.IsTerminal(int(os.Stdout.Fd())) },
			StderrIsTerminal: func() bool { return term.IsTerminal(int(os.Stderr.Fd())) },
		},
		ReadPassword: readPassword,
	})
	stop()
	if code == clierr.BrokenPipe {
		exitBrokenPipe()
	}
	os.Exit(code)
}

// notifyInterrupt returns a context that the first SIGINT or SIGTERM
// cancels, so that the command stops: it ends its requests, flushes its
// journal and files, reports, and returns 130. The signal also puts back
// the default handling, so that a second one ends the process at once,
// as it does by default. A command that has not returned interruptGrace
// after the first signal (it waits where it cannot see the context: a
// write to a stdout that no one reads, a --template that does not end)
// is ended all the same: the process says so on stderr and exits 130.
// stop, called once the command returned, ends the watch.
func notifyInterrupt(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, stopNotify := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	returned := make(chan struct{})
	go func() {
		select {
		case <-returned:
			return
		case <-ctx.Done():
		}
		stopNotify()
		grace := time.NewTimer(interruptGrace)
		defer grace.Stop()
		select {
		case <-returned:
		case <-grace.C:
			exitInterrupted(stderr)
		}
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { stopNotify(); close(returned) }) }
}

// exitInterrupted ends the process with 130, after a line on stderr. A
// stderr that blocks (a pipe no one reads) holds it a second at most.
func exitInterrupted(stderr io.Writer) {
	wrote := make(chan struct{})
	go func() {
		_, _ = fmt.Fprintf(stderr, "synthient: interrupted: the command had not stopped %v after the signal\n", interruptGrace)
		close(wrote)
	}()
	select {
	case <-wrote:
	case <-time.After(time.Second):
	}
	os.Exit(clierr.Interrupt)
}

// exitBrokenPipe ends the process as SIGPIPE ends a standard tool whose
// stdout closed, quietly: once SIGPIPE is no longer notified, a write to
// the closed stdout makes the Go runtime end the program with it. Where
// that does not end the process (Windows, or SIGPIPE ignored by the
// parent, which the runtime honours), the caller exits with
// clierr.BrokenPipe.
func exitBrokenPipe() {
	signal.Reset(syscall.SIGPIPE)
	_, _ = os.Stdout.Write([]byte{'\n'}) // to a stdout that has no reader: nothing is shown
}

// readPassword reads a line from the terminal on stdin without echoing
// it. When ctx ends first (Ctrl-C), the read is abandoned and the
// terminal's state put back, so that it echoes again.
func readPassword(ctx context.Context) ([]byte, error) {
	fd := int(os.Stdin.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return nil, err
	}
	b, err := interrupt.Do(ctx, func() ([]byte, error) { return term.ReadPassword(fd) }, nil)
	if ctx.Err() != nil {
		_ = term.Restore(fd, state)
	}
	return b, err
}
