package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
)

func (a *app) streamCommand() *cobra.Command {
	var o streamOptions
	cmd := &cobra.Command{
		Use:   "stream FEED",
		Short: "Print a feed's real-time events, one line each",
		Long: `Print a feed's real-time events until --max-events or --duration is reached,
the server closes the stream, or you interrupt. With --reconnect it reopens
the stream at once after a clean close and after max(Retry-After, 2s) on
other errors, and stops on a 401 or 403. When --duration runs out while the
stream is down, waiting to reconnect after an error, the command exits with
that error's code.

In text, each event is one line: its time (UTC; honeypot_adb events have
none) and the fields that tell the feed's events apart, such as address,
provider, type, country and ASN for proxies. --output json prints each event
as the server sent it, one JSON object per line (NDJSON): use it to keep
events in a file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.stream(cmd.Context(), args[0], o)
		},
	}
	cmd.Flags().IntVar(&o.maxEvents, "max-events", 0, "stop after this many events (0: no limit)")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "stop after this long (0: no limit)")
	cmd.Flags().BoolVar(&o.reconnect, "reconnect", false, "reopen the stream when it ends")
	return cmd
}

// streamOptions are the flags of stream.
type streamOptions struct {
	maxEvents int
	duration  time.Duration
	reconnect bool
}

// stream checks the arguments, builds the client and follows the feed,
// for at most --duration. cmdCtx is the command's context, done on an
// interrupt.
func (a *app) stream(cmdCtx context.Context, feedArg string, o streamOptions) error {
	feed, err := parseFeed(feedArg)
	if err != nil {
		return err
	}
	if o.maxEvents < 0 || o.duration < 0 {
		return usageError("--max-events and --duration must not be negative")
	}
	c, err := a.newClient()
	if err != nil {
		return err
	}
	ctx := cmdCtx
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(cmdCtx, o.duration)
		defer cancel()
	}
	s := &streamRun{streamOptions: o, app: a, client: c, feed: feed, ctx: ctx, cmdCtx: cmdCtx}
	if err := s.follow(); err != nil {
		return err
	}
	return a.shapeFailuresError("events")
}

// streamRun is one run of stream: its options, and the two contexts that
// tell its stops apart.
type streamRun struct {
	streamOptions
	app    *app
	client *synthient.Client
	feed   synthient.Feed
	ctx    context.Context // the run's: cmdCtx, bounded by --duration
	cmdCtx context.Context // the command's: done on an interrupt
	n      int             // events printed
}

// follow prints the stream's events until a stop, reopening the stream
// after it ended when reconnectDelay allows, once pause has waited.
func (s *streamRun) follow() error {
	for {
		err := s.app.streamOnce(s.ctx, s.client, s.feed, s.maxEvents, &s.n)
		if s.finished() {
			return nil
		}
		wait, ok := s.reconnectDelay(err)
		if !ok {
			return err
		}
		if again, err := s.pause(err, wait); !again {
			return err
		}
	}
}

// finished reports the stops that end the run in success: --max-events
// printed, or --duration up.
func (s *streamRun) finished() bool {
	if s.maxEvents > 0 && s.n >= s.maxEvents {
		return true
	}
	return s.durationUp()
}

// durationUp reports that --duration ran out: the run's context is done,
// and not by an interrupt.
func (s *streamRun) durationUp() bool {
	return s.duration > 0 && s.ctx.Err() != nil && s.cmdCtx.Err() == nil
}

// reconnectDelay reports whether the stream that ended in err (nil: a
// clean close) is reopened, and after how long: only with --reconnect,
// never after a failed write to stdout (an *exitError: reopening cannot
// mend it), and as synthient.ReconnectDelay decides.
func (s *streamRun) reconnectDelay(err error) (time.Duration, bool) {
	var local *exitError
	if !s.reconnect || errors.As(err, &local) {
		return 0, false
	}
	return synthient.ReconnectDelay(err)
}

// pause reports the error that ended the stream, if any, and waits wait
// before it is reopened (again). When the run's context is done first it
// returns the run's error instead: with --duration up while the stream is
// down, the failure that took it down (nil after a clean close); on an
// interrupt, the context's error.
func (s *streamRun) pause(err error, wait time.Duration) (again bool, _ error) {
	if err != nil {
		if !s.app.quiet {
			fmt.Fprintf(s.app.env.stderr, "synthient: stream ended: %s; reconnecting in %s\n", s.app.describe(err), wait)
		}
	}
	select {
	case <-time.After(wait):
		return true, nil
	case <-s.ctx.Done():
		if s.durationUp() {
			// --duration is up while the stream is down: the run ends
			// in the failure that took it down.
			return false, err
		}
		return false, s.ctx.Err()
	}
}

// printEvent prints one event of feed: its line in text output (or its
// JSON, when it does not decode as the feed's), its JSON otherwise.
func (a *app) printEvent(feed synthient.Feed, ev []byte) error {
	if !a.json() {
		if line, ok := eventLine(feed, ev); ok {
			_, err := io.WriteString(a.env.stdout, line+"\n")
			return err
		}
	}
	return a.emitJSON(a.env.stdout, ev)
}

// streamOnce prints events until the stream ends, counting them in n. A
// failed write to stdout is an *exitError (exit 1), which --reconnect
// does not retry: reopening the stream cannot mend stdout.
func (a *app) streamOnce(ctx context.Context, c *synthient.Client, feed synthient.Feed, maxEvents int, n *int) error {
	for ev, err := range c.StreamRaw(ctx, feed) {
		if err != nil {
			return err
		}
		switch err := a.tolerate(a.printEvent(feed, ev), "event", int64(*n+1)); {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err() // --jq stopped by Ctrl-C or --duration
		default:
			return &exitError{code: exitFailure, err: err} // the output's failure, not the stream's
		}
		*n++
		if maxEvents > 0 && *n >= maxEvents {
			return nil
		}
	}
	return nil
}
