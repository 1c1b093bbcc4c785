// Package stream is the stream command: a feed's real-time events, one
// line each.
package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/streamtext"
)

// Options are the options of stream.
type Options struct {
	Printer  *output.Printer
	Client   func(...synthient.Option) (*synthient.Client, error)
	Err      io.Writer // stderr: the reconnect notices
	Quiet    bool
	Describe func(error) string

	Feed      string
	MaxEvents int
	Duration  time.Duration
	Reconnect bool
}

// NewCmdStream returns stream.
func NewCmdStream(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Client: f.Client, Describe: f.Describe}
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
		Args: cmdutil.ExactArgs("FEED"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Err, opts.Quiet, opts.Feed = f.Printer, f.IO.ErrOut, f.Flags.Quiet, args[0]
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.MaxEvents, "max-events", 0, "stop after this many events (0: no limit)")
	cmd.Flags().DurationVar(&opts.Duration, "duration", 0, "stop after this long (0: no limit)")
	cmd.Flags().BoolVar(&opts.Reconnect, "reconnect", false, "reopen the stream when it ends")
	cmdutil.SetExamples(cmd, "synthient stream proxies --max-events 5", "synthient stream honeypot_http --max-events 5 --reconnect -o json")
	return cmdutil.TakesFeed(cmd)
}

// run checks the arguments, builds the client and follows the feed, for
// at most --duration. cmdCtx is the command's context, done on an
// interrupt.
func run(cmdCtx context.Context, o *Options) error {
	feed, err := cmdutil.ParseFeed(o.Feed)
	if err != nil {
		return err
	}
	if o.MaxEvents < 0 || o.Duration < 0 {
		return clierr.Usagef("--max-events and --duration must not be negative")
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	ctx := cmdCtx
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(cmdCtx, o.Duration)
		defer cancel()
	}
	s := &streamRun{Options: o, client: c, feed: feed, ctx: ctx, cmdCtx: cmdCtx}
	if err := s.follow(); err != nil {
		return err
	}
	return o.Printer.FailuresError("events")
}

// streamRun is one run of stream: its options, and the two contexts that
// tell its stops apart.
type streamRun struct {
	*Options
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
		err := s.once()
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
	if s.MaxEvents > 0 && s.n >= s.MaxEvents {
		return true
	}
	return s.durationUp()
}

// durationUp reports that --duration ran out: the run's context is done,
// and not by an interrupt.
func (s *streamRun) durationUp() bool {
	return s.Duration > 0 && s.ctx.Err() != nil && s.cmdCtx.Err() == nil
}

// reconnectDelay reports whether the stream that ended in err (nil: a
// clean close) is reopened, and after how long: only with --reconnect,
// never after a failed write to stdout (a *clierr.Error: reopening cannot
// mend it), and as synthient.ReconnectDelay decides.
func (s *streamRun) reconnectDelay(err error) (time.Duration, bool) {
	var local *clierr.Error
	if !s.Reconnect || errors.As(err, &local) {
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
	if err != nil && !s.Quiet {
		_, _ = fmt.Fprintf(s.Err, "synthient: stream ended: %s; reconnecting in %s\n", s.Describe(err), wait) // stderr: a failed write has nowhere to be reported
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

// printEvent prints one event: its line in text output (or its JSON,
// when it does not decode as the feed's), its JSON otherwise.
func (s *streamRun) printEvent(ev []byte) error {
	p := s.Printer
	if !p.JSON() {
		if line, ok := streamtext.EventLine(s.feed, ev); ok {
			_, err := io.WriteString(p.Out, line+"\n")
			return err
		}
	}
	return p.EmitJSON(p.Out, ev)
}

// once prints events until the stream ends, counting them. A failed
// write to stdout is a *clierr.Error (exit 1), which --reconnect does not
// retry: reopening the stream cannot mend stdout.
func (s *streamRun) once() error {
	for ev, err := range s.client.StreamRaw(s.ctx, s.feed) {
		if err != nil {
			return err
		}
		switch err := s.Printer.Tolerate(s.printEvent(ev), "event", int64(s.n+1)); {
		case err == nil:
		case s.ctx.Err() != nil:
			return s.ctx.Err() // --jq stopped by Ctrl-C or --duration
		default:
			return clierr.New(clierr.Failure, err) // the output's failure, not the stream's
		}
		s.n++
		if s.MaxEvents > 0 && s.n >= s.MaxEvents {
			return nil
		}
	}
	return nil
}
