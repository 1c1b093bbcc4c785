package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
)

func (a *app) streamCommand() *cobra.Command {
	var maxEvents int
	var duration time.Duration
	var reconnect bool
	cmd := &cobra.Command{
		Use:   "stream FEED",
		Short: "Print a feed's real-time events, one JSON object per line",
		Long: `Print a feed's real-time events as NDJSON (in both output formats) until
--max-events or --duration is reached, the server closes the stream, or
you interrupt. With --reconnect it reopens the stream at once after a
clean close and after max(Retry-After, 2s) on other errors, and stops on a
401 or 403. When --duration runs out while the stream is down, waiting to
reconnect after an error, the command exits with that error's code.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			feed, err := parseFeed(args[0])
			if err != nil {
				return err
			}
			if maxEvents < 0 || duration < 0 {
				return usageError("--max-events and --duration must not be negative")
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			n := 0
			for {
				err := a.streamOnce(ctx, c, feed, maxEvents, &n)
				if maxEvents > 0 && n >= maxEvents {
					return nil
				}
				if duration > 0 && ctx.Err() != nil && cmd.Context().Err() == nil {
					return nil // --duration is up
				}
				var local *exitError // a failed write to stdout: reopening cannot mend it
				if !reconnect || errors.As(err, &local) {
					return err
				}
				wait, ok := synthient.ReconnectDelay(err)
				if !ok {
					return err
				}
				if err != nil {
					fmt.Fprintf(a.env.stderr, "synthient: stream ended: %s; reconnecting in %s\n", a.describe(err), wait)
				}
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					if duration > 0 && cmd.Context().Err() == nil {
						// --duration is up while the stream is down: the
						// run ends in the failure that took it down.
						return err
					}
					return ctx.Err()
				}
			}
		},
	}
	cmd.Flags().IntVar(&maxEvents, "max-events", 0, "stop after this many events (0: no limit)")
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop after this long (0: no limit)")
	cmd.Flags().BoolVar(&reconnect, "reconnect", false, "reopen the stream when it ends")
	return cmd
}

// streamOnce prints events until the stream ends, counting them in n. A
// failed write to stdout is an *exitError (exit 1), which --reconnect
// does not retry: reopening the stream cannot mend stdout.
func (a *app) streamOnce(ctx context.Context, c *synthient.Client, feed synthient.Feed, maxEvents int, n *int) error {
	for ev, err := range c.StreamRaw(ctx, feed) {
		if err != nil {
			return err
		}
		if err := writeJSONLine(a.env.stdout, ev); err != nil {
			return &exitError{code: exitFailure, err: err} // the output's failure, not the stream's
		}
		*n++
		if maxEvents > 0 && *n >= maxEvents {
			return nil
		}
	}
	return nil
}
