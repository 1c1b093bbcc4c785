package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
)

func (a *app) exportsCommand() *cobra.Command {
	return groupCommand("exports", "List, describe, download and read a feed's Parquet exports",
		withCSV(takesFeed(a.exportsListCommand()), "one row per export"), a.takesExportID(takesFeed(a.exportsMetaCommand())),
		a.takesExportID(takesFeed(a.exportsDownloadCommand())),
		withCSV(a.exportsHeadCommand(), "one row per row of the file"), a.exportsSchemaCommand())
}

// takesFeed readies cmd, whose first argument is a feed: its help lists the
// feed names, and shell completion offers them. It returns cmd.
func takesFeed(cmd *cobra.Command) *cobra.Command {
	long := cmd.Long
	if long == "" {
		long = cmd.Short + "."
	}
	cmd.Long = long + "\n\nFEED is one of: " + strings.Join(feedNames(), ", ") + "."
	cmd.ValidArgsFunction = completeFeed
	return cmd
}

// feedNames returns the names of the feeds, as synthient.Feeds orders them.
func feedNames() []string {
	names := make([]string, len(synthient.Feeds))
	for i, f := range synthient.Feeds {
		names[i] = string(f)
	}
	return names
}

// completeFeed completes a command's first argument with the feed names
// that start with what was typed, and no later argument with file names.
func completeFeed(_ *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, name := range feedNames() {
		if strings.HasPrefix(name, typed) {
			out = append(out, name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// takesExportID readies cmd, whose arguments are FEED ID: shell completion
// offers the feed names, then "latest" and, with a key (or --fake), the
// ids of the feed's newest exports. It returns cmd.
func (a *app) takesExportID(cmd *cobra.Command) *cobra.Command {
	cmd.ValidArgsFunction = a.completeFeedAndID
	return cmd
}

// completeFeedAndID completes FEED, then ID (see takesExportID).
func (a *app) completeFeedAndID(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return completeFeed(cmd, args, typed)
	}
	var out []cobra.Completion
	for _, id := range append([]string{"latest"}, a.exportIDs(cmd.Context(), args[0])...) {
		if strings.HasPrefix(id, typed) {
			out = append(out, id)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// exportIDs returns the ids of the newest exports of feed, for completion:
// none without a key (and without --fake), or when the listing fails or
// takes more than 3 s.
func (a *app) exportIDs(ctx context.Context, feed string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := synthient.ParseFeed(feed)
	if err != nil || a.resolveKey(ctx) != nil || a.key == "" && !a.fake {
		return nil
	}
	c, err := a.newClient()
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

func parseFeed(s string) (synthient.Feed, error) {
	f, err := synthient.ParseFeed(s)
	if err != nil {
		return "", usageError("unknown feed %q (one of %v)", s, synthient.Feeds)
	}
	return f, nil
}

func (a *app) exportsListCommand() *cobra.Command {
	var limit int
	var all bool
	var cursor string
	cmd := &cobra.Command{
		Use:   "list FEED",
		Short: "List a feed's exports, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			feed, err := parseFeed(args[0])
			if err != nil {
				return err
			}
			if err := checkLimit(cmd, limit, 500); err != nil {
				return err
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			p := &synthient.ListExportsParams{Limit: limit, Cursor: cursor}
			if all {
				return a.listAllExports(cmd.Context(), c, feed, p)
			}
			return a.listExportsPage(cmd.Context(), c, feed, p)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "page size, 1 to 500 (default: the API's, 100)")
	cmd.Flags().BoolVar(&all, "all", false, "follow every page (JSON: one export per line)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "start at this page's cursor")
	return cmd
}

// listExportsPage prints one page of exports: in JSON the page as it is,
// in text a table and, when there are more pages, the --cursor to ask for
// the next.
func (a *app) listExportsPage(ctx context.Context, c *synthient.Client, feed synthient.Feed, p *synthient.ListExportsParams) error {
	page, err := c.ListExports(ctx, feed, p)
	if err != nil {
		return err
	}
	switch {
	case a.json():
		return a.emit(page)
	case a.csv():
		// The hint goes to stderr: stdout is the CSV.
		if err := writeExportsCSV(a.env.stdout, page.Exports); err != nil {
			return err
		}
		if !a.quiet {
			a.moreHint(a.env.stderr, page.NextCursor, "synthient: ")
		}
		return nil
	}
	if err := writeExports(a.env.stdout, page.Exports); err != nil {
		return err
	}
	a.moreHint(a.env.stdout, page.NextCursor, "\n")
	return nil
}

// moreHint says how to list the next page, after prefix, when there is
// one (cursor not empty).
func (a *app) moreHint(w io.Writer, cursor, prefix string) {
	switch {
	case cursor == "":
	case a.fake:
		// Each run starts a new fake: a cursor of this one means nothing
		// to the next.
		fmt.Fprintln(w, prefix+"more: --all (with --fake each run starts a new fake API, which a --cursor from this one does not reach)")
	default:
		// One line: a newline in the cursor must not forge another.
		fmt.Fprintf(w, "%smore: --cursor %s (or --all)\n", prefix, shellWord(escapeCell(cursor)))
	}
}

// listAllExports prints the exports of every page: in JSON one export per
// line as it comes, in text one table once the last page came (nothing
// when a page fails).
func (a *app) listAllExports(ctx context.Context, c *synthient.Client, feed synthient.Feed, p *synthient.ListExportsParams) error {
	var exports []synthient.Export
	for e, err := range c.AllExports(ctx, feed, p) {
		if err != nil {
			return err
		}
		if a.json() {
			if err := a.emit(e); err != nil {
				return err
			}
			continue
		}
		exports = append(exports, e)
	}
	switch {
	case a.json():
		return nil
	case a.csv():
		return writeExportsCSV(a.env.stdout, exports)
	}
	return writeExports(a.env.stdout, exports)
}

func (a *app) exportsMetaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "meta FEED ID",
		Short: "Describe one export (ID: latest, YYYY-MM-DD or YYYY-MM-DD/HH)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			feed, err := parseFeed(args[0])
			if err != nil {
				return err
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			m, err := c.ExportMeta(cmd.Context(), feed, args[1])
			if err != nil {
				return err
			}
			if a.json() {
				return a.emit(m)
			}
			t := newTable(a.env.stdout)
			t.row("Stream", m.Stream)
			t.row("ID", m.ID)
			t.row("Kind", m.Kind)
			t.row("Format", m.Format)
			t.row("Date", unixDate(m.Date))
			t.row("Created", unixTime(m.CreatedAt))
			t.row("Size", fmt.Sprintf("%s (%d bytes)", bytesHuman(m.Size), m.Size))
			t.row("Rows", strconv.FormatInt(m.Rows, 10))
			t.row("SHA-256", m.Checksum)
			var cols []string
			for _, f := range m.Schema.Fields {
				cols = append(cols, f.Name+" "+f.Type)
			}
			t.row("Columns", list(cols))
			return t.flush()
		},
	}
}

func (a *app) exportsDownloadCommand() *cobra.Command {
	var d download
	cmd := &cobra.Command{
		Use:   "download FEED ID --out FILE",
		Short: "Download one export to a file (via a temporary FILE.<digits>.part, renamed when complete), or to stdout with --out -",
		Long: `Download one export. With --out FILE the bytes go to a new temporary file
beside FILE, which is renamed to FILE once every byte arrived (and, with
--verify, matched the SHA-256 of the export's meta); FILE never holds a partial
file. An existing FILE is kept unless --force; a FILE that is not a regular
file (a device, a FIFO, a socket, a directory) is refused.

With --out - the bytes go to stdout (never a terminal) and the summary to
stderr. Exactly the export's size is written; with --verify a mismatch is found
only after the bytes were written, and the exit code is then 3: discard the
output.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if d.out == "" {
				return usageError("exports download needs --out FILE (or --out - for stdout)")
			}
			feed, err := parseFeed(args[0])
			if err != nil {
				return err
			}
			if err := a.checkDownloadOut(d.out); err != nil {
				return err
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			d.feed, d.id = feed, args[1]
			return a.runDownload(cmd.Context(), c, &d)
		},
	}
	cmd.Flags().StringVar(&d.out, "out", "", "file to write, or - for stdout")
	cmd.Flags().BoolVar(&d.verify, "verify", false, "check the SHA-256 against the export's meta")
	cmd.Flags().BoolVar(&d.force, "force", false, "overwrite an existing file")
	return cmd
}

// download is one exports download command line.
type download struct {
	feed          synthient.Feed
	id, out       string
	verify, force bool
}

func (d *download) toStdout() bool { return d.out == "-" }

// checkDownloadOut refuses, before any request, an --out the download
// must not write: stdout when it is a terminal (an export is binary), or a
// file that is not a regular one.
func (a *app) checkDownloadOut(out string) error {
	if out == "-" {
		if a.env.stdoutIsTerminal != nil && a.env.stdoutIsTerminal() {
			return usageError("--out - would write a binary export to the terminal: redirect stdout or name a file")
		}
		return nil
	}
	return checkOutFile(out)
}

// runDownload downloads d with a progress bar on a terminal's stderr and
// reports the result.
func (a *app) runDownload(ctx context.Context, c *synthient.Client, d *download) error {
	p := &synthient.DownloadParams{Verify: d.verify, Overwrite: d.force}
	finish := a.downloadProgress(p)
	var m *synthient.ExportMeta
	var err error
	if d.toStdout() {
		m, err = c.DownloadExportTo(ctx, d.feed, d.id, a.rawStdout, p)
		if errors.Is(err, synthient.ErrChecksumMismatch) {
			err = fmt.Errorf("%w (the bytes written to stdout are not the export: discard them)", err)
		}
	} else {
		m, err = c.DownloadExportFile(ctx, d.feed, d.id, d.out, p)
	}
	finish()
	if err != nil {
		return err
	}
	return a.reportDownload(d, m)
}

// downloadProgress sets p.Progress to draw a progress bar on a terminal's
// stderr (see showProgress); the returned finish ends the bar, once the
// download returned.
func (a *app) downloadProgress(p *synthient.DownloadParams) (finish func()) {
	var bar *progressbar.ProgressBar
	if a.showProgress() {
		p.Progress = func(done, total int64) {
			if bar == nil {
				bar = newBytesBar(a.progress, total, "downloading")
			}
			bar.Set64(done)
		}
	}
	return func() {
		if bar != nil {
			bar.Finish()
			fmt.Fprintln(a.progress)
		}
	}
}

// reportDownload prints what was written: on stdout, or on stderr when
// stdout carries the export.
func (a *app) reportDownload(d *download, m *synthient.ExportMeta) error {
	w := a.env.stdout
	if d.toStdout() {
		w = a.env.stderr
	}
	if a.json() {
		return a.emitTo(w, struct {
			File     string                `json:"file"`
			Verified bool                  `json:"verified"`
			Meta     *synthient.ExportMeta `json:"meta"`
		}{d.out, d.verify, m})
	}
	verified := ""
	if d.verify {
		verified = ", SHA-256 verified"
	}
	dest := d.out
	if d.toStdout() {
		dest = "stdout"
	}
	_, err := fmt.Fprintf(w, "wrote %s: %s %s, %s%s\n", escapeCell(dest), escapeCell(m.Stream), escapeCell(m.ID), bytesHuman(m.Size), verified)
	return err
}

// checkOutFile refuses, before any request, an --out the download must
// not or cannot write. A download replaces its target by renaming a new
// file over it: that would turn a device such as /dev/null, a FIFO or a
// socket into a regular file, also with --force, and replace a symbolic
// link itself, not what it points to (the SDK refuses a link too, but
// /dev/stdout is one, and the message here points to --out -). A name too
// long for the file system is refused here too: the SDK's temporary file
// takes a shorter name, and only the final rename, after the download,
// would fail. Any other path that cannot be created is the SDK's to
// report, before it sends anything (see exitCode).
func checkOutFile(path string) error {
	const useStdout = "--out - writes to stdout, which can be redirected"
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG):
		return usageError("--out %s: %v", path, syscall.ENAMETOOLONG)
	case err != nil, fi.Mode().IsRegular():
		return nil // a path that does not exist yet, or one the SDK reports on
	case fi.Mode()&fs.ModeSymlink != 0:
		return usageError("--out %s is a symbolic link: refusing to replace it (name the file it points to; %s)", path, useStdout)
	case fi.IsDir():
		return usageError("--out %s is a directory, not a regular file", path)
	}
	return usageError("--out %s is not a regular file (a device, a named pipe or a socket): refusing to replace it (%s)", path, useStdout)
}
