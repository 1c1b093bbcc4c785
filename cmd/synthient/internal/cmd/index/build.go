package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/feedindex"
)

// BuildOptions are the options of index build.
type BuildOptions struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)

	Sources []string // FEED or FILE.parquet
	Out     string
	MaxAge  time.Duration
	Latest  bool // only the newest hourly export of a feed
	Force   bool
}

// NewCmdBuild returns index build. runF, when not nil, runs in place of
// the command's own run function.
func NewCmdBuild(f *cmdutil.Factory, runF func(context.Context, *BuildOptions) error) *cobra.Command {
	opts := &BuildOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "build {FEED | FILE.parquet}... --out FILE",
		Short: "Build an index file from feeds' newest exports or from export files",
		Long: `Build an index file from export files and from the feeds' newest exports.

A FEED (proxies, ja4t or anonymizers) downloads the feed's newest daily export
and every hourly export listed after it (with --latest, only the newest hourly
one), each verified against its checksum, to a temporary directory removed
afterwards. A FILE is read as it is; its feed is told by its columns
(range_start and range_end: anonymizers; ip and ja4t: ja4t; ip: proxies).
The sources are added in the order given: of an address's rows seen at the
same time, the one added last counts.

The file is written whole, through a temporary file renamed over --out, so
that a process reading the old one goes on unharmed. An existing --out is
replaced only with --force. Each source prints one line (one JSON object with
-o json): its feed, the rows read, skipped (no address the index can keep) and
expired (older than --max-age).

` + indexHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Sources = f.Printer, args
			if opts.Out == "" {
				return clierr.Usagef("--out FILE is required: the index file to write")
			}
			if opts.MaxAge < 0 {
				return clierr.Usagef("--max-age must not be negative")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return buildRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "the index file to write")
	cmd.Flags().DurationVar(&opts.MaxAge, "max-age", 0, "leave out rows last seen longer ago than this (0: keep all)")
	cmd.Flags().BoolVar(&opts.Latest, "latest", false, "for a FEED, only its newest hourly export")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing --out")
	cmdutil.SetExamples(cmd, "synthient index build proxies anonymizers --out feeds.synidx --force",
		"synthient index build ja4t --latest --out ja4t.synidx --max-age 24h")
	return cmd
}

// sourceResult is what index build prints of a source.
type sourceResult struct {
	Feed    string `json:"feed"`
	Source  string `json:"source"`
	Rows    int64  `json:"rows"`
	Skipped int64  `json:"skipped"`
	Expired int64  `json:"expired"`
}

func buildRun(ctx context.Context, o *BuildOptions) error {
	if _, err := os.Lstat(o.Out); err == nil && !o.Force {
		return clierr.Usagef("%s exists: give --force to replace it", o.Out)
	}
	ix, err := feedindex.New(feedindex.WithMaxAge(o.MaxAge))
	if err != nil {
		return err
	}
	defer ix.Close()
	for _, src := range o.Sources {
		if err := o.addSource(ctx, ix, src); err != nil {
			return err
		}
	}
	return ix.Save(o.Out)
}

// addSource adds src, a FEED or a FILE, to ix.
func (o *BuildOptions) addSource(ctx context.Context, ix *feedindex.Index, src string) error {
	if feed, err := cmdutil.ParseFeed(src); err == nil && !strings.HasSuffix(src, ".parquet") {
		return o.addFeed(ctx, ix, feed)
	}
	if _, err := os.Stat(src); err != nil {
		return clierr.Usagef("%q is neither a feed (proxies, ja4t, anonymizers) nor a file: %v", src, err)
	}
	return o.addFile(ix, src, "", "")
}

// addFile adds the export file path to ix: of feed when it is not empty,
// else of the feed its columns tell; id is the export's id, if any.
func (o *BuildOptions) addFile(ix *feedindex.Index, path string, feed synthient.Feed, id string) error {
	xf, err := exports.Open(path)
	if err != nil {
		return err
	}
	defer xf.Close()
	if feed == "" {
		var ok bool
		if feed, ok = feedindex.DetectFeed(xf); !ok {
			return clierr.Usagef("%s is not an export of proxies, ja4t or anonymizers: it has no ip nor range_start column", path)
		}
	}
	a, err := ix.AddFile(feed, id, xf)
	if err != nil {
		return err
	}
	name := path
	if id != "" {
		name = id
	}
	r := sourceResult{Feed: string(feed), Source: name, Rows: a.Rows, Skipped: a.Skipped, Expired: a.Expired}
	if o.Printer.JSON() {
		return o.Printer.Emit(r)
	}
	_, err = fmt.Fprintf(o.Printer.Out, "%s %s: %d rows, %d skipped, %d expired\n", r.Feed, r.Source, r.Rows, r.Skipped, r.Expired)
	return err
}

// addFeed downloads feed's newest exports and adds them to ix.
func (o *BuildOptions) addFeed(ctx context.Context, ix *feedindex.Index, feed synthient.Feed) error {
	if !isIndexFeed(feed) {
		return clierr.Usagef("the %s feed names no addresses: an index holds proxies, ja4t and anonymizers", feed)
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	page, err := c.ListExports(ctx, feed, &synthient.ListExportsParams{Limit: 500})
	if err != nil {
		return err
	}
	ids := newest(page.Exports, o.Latest)
	if len(ids) == 0 {
		return clierr.New(clierr.API, fmt.Errorf("the %s feed lists no export", feed))
	}
	dir, err := os.MkdirTemp("", "synthient-index-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }() // temporary copies of exports: nothing is lost
	for _, id := range ids {
		path := filepath.Join(dir, strings.ReplaceAll(id, "/", "-")+".parquet")
		if _, err := c.DownloadExportFile(ctx, feed, id, path, &synthient.DownloadParams{Verify: true}); err != nil {
			return err
		}
		if err := o.addFile(ix, path, feed, id); err != nil {
			return err
		}
		_ = os.Remove(path) // the directory goes at the end anyway
	}
	return nil
}

// newest returns the ids of the exports to add, oldest first: the newest
// daily one and the hourly ones listed after it, or only the newest
// hourly one (latest).
func newest(list []synthient.Export, latest bool) []string {
	var ids []string
	for _, e := range list { // newest first
		if e.Kind == "daily" && !latest {
			ids = append(ids, e.ID)
			break
		}
		if e.Kind == "hourly" {
			ids = append(ids, e.ID)
			if latest {
				break
			}
		}
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}

func isIndexFeed(feed synthient.Feed) bool {
	for _, f := range feedindex.Feeds {
		if f == feed {
			return true
		}
	}
	return false
}
