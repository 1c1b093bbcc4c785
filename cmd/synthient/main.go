// Command synthient is the command-line client of the Synthient API: IP and
// domain lookups, account details, exports and real-time streams, plus a
// local fake API and a guided demo of the SDK's retry behaviour.
//
//	synthient demo                     # the guided tour, on an in-process fake API
//	synthient lookup ip 8.8.8.8        # needs SYNTHIENT_API_KEY, or --fake
//
// See docs/cli.md for every command.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	// A closed pipe (synthient ... | head -1) is a write error that the
	// command handles: it stops, accounts for what it read and says so,
	// where SIGPIPE would kill it silently.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first Ctrl-C asks the command to stop; a second one, for a
		// command busy where it cannot see that (a --template that does
		// not end), kills it as by default.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], &env{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		stderrIsTerminal: func() bool {
			return term.IsTerminal(int(os.Stderr.Fd()))
		},
		stdoutIsTerminal: func() bool {
			return term.IsTerminal(int(os.Stdout.Fd()))
		},
	})
	stop()
	os.Exit(code)
}
