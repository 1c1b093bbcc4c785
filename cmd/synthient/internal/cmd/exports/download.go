package exports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// DownloadOptions are the options of exports download.
type DownloadOptions struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
	RawOut  io.Writer // stdout as it is, for --out -
	Err     io.Writer // stderr: the summary of --out -
	// StdoutIsTerminal reports whether stdout is a terminal, which --out -
	// refuses.
	StdoutIsTerminal bool
	Bar              io.Writer // where the progress bar draws; nil for none

	Feed, ID, Out string
	Date          string // --date: YYYY-MM-DD or latest, in place of ID
	Hour          int    // --hour: 0 to 23 with --date; -1 for none
	Verify, Force bool
}

// NewCmdDownload returns exports download. runF, when not nil, runs in
// place of the command's own run function.
func NewCmdDownload(f *cmdutil.Factory, runF func(context.Context, *DownloadOptions) error) *cobra.Command {
	opts := &DownloadOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "download FEED [ID | --date D [--hour H]] [--out FILE]",
		Short: "Download one export to a file (via a temporary FILE.<digits>.part, renamed when complete), or to stdout with --out -",
		Long: `Download one export: ID (latest, YYYY-MM-DD or YYYY-MM-DD/HH), or --date D
(YYYY-MM-DD, or latest) with --hour H (0 to 23) for an hourly export; latest
when none is given. The bytes go to a new temporary file beside FILE, which is
renamed to FILE once every byte arrived (and, with --verify, matched the
SHA-256 of the export's meta); FILE never holds a partial file. Without --out,
FILE is <feed>-<id>.parquet in the current directory (proxies-latest.parquet,
proxies-2026-06-10-13.parquet). An existing FILE is kept unless --force; a
FILE that is not a regular file (a device, a FIFO, a socket, a directory) is
refused.

With --out - the bytes go to stdout (never a terminal) and the summary to
stderr. Exactly the export's size is written; with --verify a mismatch is found
only after the bytes were written, and the exit code is then 3: discard the
output.`,
		Args: cmdutil.RangeArgs(1, "FEED", "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.RawOut, opts.Err, opts.Feed = f.Printer, f.IO.RawOut, f.IO.ErrOut, args[0]
			if len(args) == 2 {
				opts.ID = args[1]
			}
			opts.StdoutIsTerminal, opts.Bar = f.IO.StdoutIsTerminal(), barWriter(f)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return downloadRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "file to write, or - for stdout (default <feed>-<id>.parquet)")
	cmd.Flags().StringVarP(&opts.Date, "date", "d", "", "the day of the export, YYYY-MM-DD, or latest (in place of ID)")
	cmd.Flags().IntVar(&opts.Hour, "hour", -1, "with --date: the hour of an hourly export, 0 to 23")
	cmd.Flags().BoolVar(&opts.Verify, "verify", false, "check the SHA-256 against the export's meta")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite an existing file")
	cmdutil.SetExamples(cmd, "synthient exports download proxies latest --out proxies.parquet --verify",
		"synthient exports download anonymizers --date 2026-06-09", "synthient exports download proxies --date 2026-06-10 --hour 13 --force")
	return cmdutil.TakesFeed(cmd)
}

func (o *DownloadOptions) toStdout() bool { return o.Out == "-" }

func downloadRun(ctx context.Context, o *DownloadOptions) error {
	feed, err := cmdutil.ParseFeed(o.Feed)
	if err != nil {
		return err
	}
	if err := o.resolveID(feed); err != nil {
		return err
	}
	if err := o.checkOut(); err != nil {
		return err
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	p := &synthient.DownloadParams{Verify: o.Verify, Overwrite: o.Force}
	finish := downloadProgress(o.Bar, p)
	var m *synthient.ExportMeta
	if o.toStdout() {
		m, err = c.DownloadExportTo(ctx, feed, o.ID, o.RawOut, p)
		if errors.Is(err, synthient.ErrChecksumMismatch) {
			err = fmt.Errorf("%w (the bytes written to stdout are not the export: discard them)", err)
		}
	} else {
		m, err = c.DownloadExportFile(ctx, feed, o.ID, o.Out, p)
	}
	finish()
	if err != nil {
		return err
	}
	return o.report(m)
}

// resolveID sets ID from --date and --hour, or to latest when neither nor
// an ID was given, and Out to <feed>-<id>.parquet when it was not given.
func (o *DownloadOptions) resolveID(feed synthient.Feed) error {
	switch {
	case o.ID != "" && (o.Date != "" || o.Hour >= 0):
		return clierr.Usagef("give the export as ID or as --date (and --hour), not both")
	case o.Hour >= 0 && (o.Date == "" || o.Date == "latest"):
		return clierr.Usagef("--hour %d needs --date YYYY-MM-DD: the day of the hourly export", o.Hour)
	case o.Hour > 23 || o.Hour < -1:
		return clierr.Usagef("--hour must be 0 to 23, not %d", o.Hour)
	case o.Hour >= 0:
		o.ID = fmt.Sprintf("%s/%02d", o.Date, o.Hour)
	case o.Date != "":
		o.ID = o.Date
	case o.ID == "":
		o.ID = "latest"
	}
	if o.Out == "" {
		o.Out = string(feed) + "-" + strings.ReplaceAll(o.ID, "/", "-") + ".parquet"
	}
	return nil
}

// checkOut refuses, before any request, an --out the download must not
// write: stdout when it is a terminal (an export is binary), or a file
// that is not a regular one.
func (o *DownloadOptions) checkOut() error {
	if o.toStdout() {
		if o.StdoutIsTerminal {
			return clierr.Usagef("--out - would write a binary export to the terminal: redirect stdout or name a file")
		}
		return nil
	}
	return CheckOutFile(o.Out)
}

// report prints what was written: on stdout, or on stderr when stdout
// carries the export.
func (o *DownloadOptions) report(m *synthient.ExportMeta) error {
	p := o.Printer
	w := p.Out
	if o.toStdout() {
		w = o.Err
	}
	if p.JSON() {
		return p.EmitTo(w, struct {
			File     string                `json:"file"`
			Verified bool                  `json:"verified"`
			Meta     *synthient.ExportMeta `json:"meta"`
		}{o.Out, o.Verify, m})
	}
	verified := ""
	if o.Verify {
		verified = ", SHA-256 verified"
	}
	dest := o.Out
	if o.toStdout() {
		dest = "stdout"
	}
	_, err := fmt.Fprintf(w, "wrote %s: %s %s, %s%s\n", textsafe.EscapeCell(dest), textsafe.EscapeCell(m.Stream), textsafe.EscapeCell(m.ID), render.BytesHuman(m.Size), verified)
	return err
}

// CheckOutFile refuses, before any request, an --out the download must
// not or cannot write. A download replaces its target by renaming a new
// file over it: that would turn a device such as /dev/null, a FIFO or a
// socket into a regular file, also with --force, and replace a symbolic
// link itself, not what it points to (the SDK refuses a link too, but
// /dev/stdout is one, and the message here points to --out -). A name too
// long for the file system is refused here too: the SDK's temporary file
// takes a shorter name, and only the final rename, after the download,
// would fail. Any other path that cannot be created is the SDK's to
// report, before it sends anything (see clierr.UnusableFile).
func CheckOutFile(path string) error {
	const useStdout = "--out - writes to stdout, which can be redirected"
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG):
		return clierr.Usagef("--out %s: %v", path, syscall.ENAMETOOLONG)
	case err != nil, fi.Mode().IsRegular():
		return nil //nolint:nilerr // a path that does not exist yet, or one the SDK reports on
	case fi.Mode()&fs.ModeSymlink != 0:
		return clierr.Usagef("--out %s is a symbolic link: refusing to replace it (name the file it points to; %s)", path, useStdout)
	case fi.IsDir():
		return clierr.Usagef("--out %s is a directory, not a regular file", path)
	}
	return clierr.Usagef("--out %s is not a regular file (a device, a named pipe or a socket): refusing to replace it (%s)", path, useStdout)
}
