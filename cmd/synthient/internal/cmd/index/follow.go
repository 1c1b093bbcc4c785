package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/feedindex"
)

// FollowOptions are the options of index follow.
type FollowOptions struct {
	Printer  *output.Printer
	Client   func(...synthient.Option) (*synthient.Client, error)
	Err      io.Writer // stderr: what the follower does, unless Quiet
	Quiet    bool
	Describe func(error) string

	Index     string
	Feeds     []string
	MaxAge    time.Duration
	SaveEvery time.Duration
	Poll      time.Duration
	Duration  time.Duration // 0: until interrupted

	// Follow sets the follower's options (tests); nil for none.
	Follow []feedindex.FollowOption
}

// NewCmdFollow returns index follow. runF, when not nil, runs in place of
// the command's own run function.
func NewCmdFollow(f *cmdutil.Factory, runF func(context.Context, *FollowOptions) error) *cobra.Command {
	opts := &FollowOptions{Client: f.Client, Describe: f.Describe}
	cmd := &cobra.Command{
		Use:   "follow --index FILE [--feed FEED]...",
		Short: "Keep an index file fresh with the feeds' streams and hourly exports",
		Long: `Keep an index file fresh: follow each feed's stream, adding its events as they
arrive, and add each newest hourly export once it is listed; save the index
to --index every --save-every and when it stops (interrupted, or after
--duration). A missing --index starts empty.

A stream that ends is opened again (at once after the API's clean close,
after max(Retry-After, 2s) on other errors; a 401 or 403 stops the command).
What a stream sent while it was down is lost, so the time from its last
event to its first event after is a gap, and the exports of every hour it
spans are added to close it; a gap no listed export covers stays open and is
reported. Each save replaces the file whole (a temporary file renamed over
it): processes that opened it (index check) read the old one unharmed.

The API lets a key hold a few streams at once (the fake: 2): following the
three feeds takes three. What the follower does is printed to stderr, one
line each, unless --quiet.

` + indexHelp,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer, opts.Err, opts.Quiet = f.Printer, f.IO.ErrOut, f.Flags.Quiet
			if opts.Index == "" {
				return clierr.Usagef("--index FILE is required: the index file to keep fresh")
			}
			if opts.SaveEvery <= 0 || opts.Poll <= 0 || opts.MaxAge < 0 || opts.Duration < 0 {
				return clierr.Usagef("--save-every and --poll must be positive, --max-age and --duration not negative")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return followRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Index, "index", "", "the index file to keep fresh")
	cmd.Flags().StringSliceVar(&opts.Feeds, "feed", []string{"proxies", "anonymizers"}, "a feed to follow: proxies, ja4t or anonymizers (repeat it)")
	cmd.Flags().DurationVar(&opts.MaxAge, "max-age", 24*time.Hour, "leave out rows last seen longer ago than this (0: keep all)")
	cmd.Flags().DurationVar(&opts.SaveEvery, "save-every", time.Minute, "how often to save the index")
	cmd.Flags().DurationVar(&opts.Poll, "poll", 5*time.Minute, "how often to list the exports")
	cmd.Flags().DurationVar(&opts.Duration, "duration", 0, "stop after this long (0: until interrupted)")
	cmdutil.SetExamples(cmd, "synthient index follow --index feeds.synidx --duration 2s",
		"synthient index follow --index feeds.synidx --feed proxies --feed ja4t --max-age 6h --duration 2s")
	return cmd
}

func followRun(ctx context.Context, o *FollowOptions) error {
	var feeds []synthient.Feed
	for _, name := range o.Feeds {
		feed, err := cmdutil.ParseFeed(name)
		if err != nil {
			return err
		}
		if !isIndexFeed(feed) {
			return clierr.Usagef("--feed %s: an index holds proxies, ja4t and anonymizers", name)
		}
		feeds = append(feeds, feed)
	}
	ix, err := openIndex(o.Index, o.MaxAge)
	if errors.Is(err, fs.ErrNotExist) {
		ix, err = feedindex.New(feedindex.WithMaxAge(o.MaxAge))
	}
	if err != nil {
		return err
	}
	defer ix.Close()
	c, err := o.Client()
	if err != nil {
		return err
	}
	opts := append([]feedindex.FollowOption{feedindex.WithFollowFeeds(feeds...), feedindex.WithPollInterval(o.Poll),
		feedindex.WithFollowEvents(o.report)}, o.Follow...)
	fl, err := feedindex.NewFollower(c, ix, opts...)
	if err != nil {
		return err
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	done := make(chan error, 1)
	go func() { done <- fl.Run(ctx) }()
	t := time.NewTicker(o.SaveEvery)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if serr := ix.Save(o.Index); serr != nil {
				return serr
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return nil // --duration ran out
			}
			return err // an interrupt's context.Canceled exits 130
		case <-t.C:
			if err := ix.Save(o.Index); err != nil {
				return err
			}
		}
	}
}

// report prints what the follower did, one line, to stderr.
func (o *FollowOptions) report(ev feedindex.FollowEvent) {
	if o.Quiet || ev.Kind == feedindex.EventsAdded {
		return
	}
	line := fmt.Sprintf("%s %s", ev.Feed, ev.Kind)
	switch ev.Kind {
	case feedindex.ExportAdded:
		line += fmt.Sprintf(" %s: %d rows, %d skipped, %d expired", ev.Export, ev.Added.Rows, ev.Added.Skipped, ev.Added.Expired)
	case feedindex.GapOpened, feedindex.GapClosed:
		line += fmt.Sprintf(" %s to %s", ev.Gap.From.Format(time.RFC3339), ev.Gap.To.Format(time.RFC3339))
	case feedindex.StreamEnded, feedindex.Failed:
		if ev.Err != nil {
			line += ": " + o.Describe(ev.Err)
		}
	}
	_, _ = fmt.Fprintln(o.Err, line) // a report on stderr: the index is what matters
}
