// Package exports is the exports command group: list, meta, download,
// head and schema of a feed's Parquet exports.
package exports

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// NewCmdExports returns the exports command group.
func NewCmdExports(f *cmdutil.Factory) *cobra.Command {
	ids := &exportIDs{f: f}
	return cmdutil.GroupCommand("exports", "List, describe, download and read a feed's Parquet exports",
		cmdutil.WithCSV(NewCmdList(f), "one row per export"),
		ids.takesExportID(NewCmdMeta(f)),
		ids.takesExportID(NewCmdDownload(f, nil)),
		cmdutil.WithCSV(NewCmdHead(f), "one row per row of the file"),
		NewCmdSchema(f))
}

// exportIDs completes the ID argument of FEED ID with the ids of the
// feed's newest exports.
type exportIDs struct{ f *cmdutil.Factory }

// takesExportID readies cmd, whose arguments are FEED ID: shell completion
// offers the feed names, then "latest" and, with a key (or --fake), the
// ids of the feed's newest exports. It returns cmd.
func (x *exportIDs) takesExportID(cmd *cobra.Command) *cobra.Command {
	cmd.ValidArgsFunction = x.complete
	return cmd
}

// complete completes FEED, then ID (see takesExportID).
func (x *exportIDs) complete(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return cmdutil.CompleteFeed(cmd, args, typed)
	}
	var out []cobra.Completion
	for _, id := range append([]string{"latest"}, x.newest(cmdutil.Context(cmd), args[0])...) {
		if strings.HasPrefix(id, typed) {
			out = append(out, id)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// newest returns the ids of the newest exports of feed, for completion:
// none without a key (and without --fake), or when the listing fails or
// takes more than 3 s.
func (x *exportIDs) newest(ctx context.Context, feed string) []string {
	f, err := synthient.ParseFeed(feed)
	if err != nil || x.f.ResolveKey(ctx) != nil || !x.f.HasKey() {
		return nil
	}
	c, err := x.f.Client() //nolint:contextcheck // with --fake it starts the fake API, which takes no context; the listing below has ctx
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	page, err := c.ListExports(ctx, f, &synthient.ListExportsParams{Limit: 100})
	if err != nil {
		return nil
	}
	ids := make([]string, len(page.Exports))
	for i, e := range page.Exports {
		ids[i] = e.ID
	}
	return ids
}

// downloadProgress sets p.Progress to draw a progress bar on bar (nil:
// none); the returned finish ends the bar, once the download returned.
func downloadProgress(bar io.Writer, p *synthient.DownloadParams) (finish func()) {
	var pb *iostreams.BytesBar
	if bar != nil {
		p.Progress = func(done, total int64) {
			if pb == nil {
				pb = iostreams.NewBytesBar(bar, total, "downloading")
			}
			_ = pb.Set64(done) // the bar only shows progress: a failed draw stops nothing
		}
	}
	return func() {
		if pb != nil {
			_ = pb.Finish() // as above
			_, _ = io.WriteString(bar, "\n")
		}
	}
}

// barWriter is where f's command line draws a progress bar: nil for none.
func barWriter(f *cmdutil.Factory) io.Writer {
	if f.ShowProgress() {
		return f.IO.Progress
	}
	return nil
}
