package exports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
	"github.com/synthient-go/synthient/internal/safefile"
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

	feed     synthient.Feed // Feed, parsed
	official bool           // the official CLI's form, download: its messages name its arguments
}

// NewCmdDownload returns exports download. runF, when not nil, runs in
// place of the command's own run function, given the options once they
// are parsed and checked (parse).
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
FILE is <feed>-<id>.parquet in the current directory, named after the export
the id resolves to (latest at 14:20 UTC: proxies-2026-06-10-13.parquet), so a
run each hour writes a new file. A FILE that exists already and holds that
export (its size and SHA-256 are the meta's) is left as it is, and nothing is
downloaded (exit 0); one that holds anything else is kept, with exit 2, unless
--force. A FILE that is not a regular file (a device, a FIFO, a socket, a
directory) is refused.

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
			if err := opts.parse(); err != nil {
				return err
			}
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

// parse checks the feed and sets feed, and sets ID from --date and
// --hour (resolveID).
func (o *DownloadOptions) parse() error {
	feed, err := cmdutil.ParseFeed(o.Feed)
	if err != nil {
		return err
	}
	o.feed = feed
	return o.resolveID()
}

// downloadRun downloads the export o describes, once parse has checked
// it.
func downloadRun(ctx context.Context, o *DownloadOptions) error {
	feed := o.feed
	if o.Out != "" {
		if err := o.checkOut(); err != nil {
			return err
		}
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	if !o.toStdout() {
		held, err := o.target(ctx, c, feed)
		if err != nil || held {
			return err
		}
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
	return o.report(m, true)
}

// resolveID sets ID from --date and --hour; else, when no ID was given,
// to the export FILE's name holds, or latest (see idOfName).
func (o *DownloadOptions) resolveID() error {
	given := o.ID != "" || o.Date != "" || o.Hour >= 0
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
	}
	if err := o.idOfName(given); err != nil {
		return err
	}
	if o.ID == "" {
		o.ID = "latest"
	}
	return nil
}

// target readies the file a download writes. Without --out it asks for
// the export's meta (a free call), which resolves latest, and names the
// file <feed>-<id>.parquet after the export's own id. A file already at
// the path (without --force) is compared with the meta: held is true, and
// reported, when it is the export (its size and SHA-256); one that
// differs is a usage error. Once the meta is known, ID is the export's
// own id, so the download fetches the export the name and the comparison
// were made for, whatever latest becomes meanwhile.
func (o *DownloadOptions) target(ctx context.Context, c *synthient.Client, feed synthient.Feed) (held bool, err error) {
	if o.Out != "" && (o.Force || !exists(o.Out)) {
		return false, nil // nothing to name or compare
	}
	m, err := c.ExportMeta(ctx, feed, o.ID)
	if err != nil {
		return false, err
	}
	o.ID = m.ID
	if o.Out == "" {
		o.Out = string(feed) + "-" + strings.ReplaceAll(m.ID, "/", "-") + ".parquet"
		if err := o.checkOutFile(false); err != nil {
			return false, err
		}
		if o.Force || !exists(o.Out) {
			return false, nil
		}
	}
	if err := checkHeld(ctx, o.Out, m); err != nil {
		return false, err
	}
	return true, o.report(m, false)
}

// exists reports whether something is at path. A path that cannot be
// looked at is the SDK's to report, before it sends anything.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// checkHeld returns nil when the file at path is the export m describes:
// a regular file of its size whose SHA-256 is its checksum. Otherwise it
// returns a usage error saying how the file differs (or that it cannot be
// read). The file is opened without blocking (safefile.Open: a named pipe
// put in its place is refused), and reading it stops when ctx is done.
func checkHeld(ctx context.Context, path string, m *synthient.ExportMeta) error {
	differs := func(format string, args ...any) error {
		return clierr.Usagef("%s exists and is not %s %s: %s (--force replaces it)",
			path, textsafe.EscapeCell(m.Stream), textsafe.EscapeCell(m.ID), fmt.Sprintf(format, args...))
	}
	sum, err := interrupt.Do(ctx, func() (fileSum, error) { return sumFile(ctx, path, m.Size) }, nil)
	switch {
	case err != nil:
		return err
	case sum.size != m.Size:
		return differs("it has %d bytes, the export %d", sum.size, m.Size)
	case !strings.EqualFold(sum.sha256, m.Checksum):
		return differs("its SHA-256 differs from the meta's")
	}
	return nil
}

// fileSum is what sumFile found of a file.
type fileSum struct {
	size   int64
	sha256 string // hexadecimal; "" when the file was not read
}

// sumFile returns the size of the regular file at path and, when that is
// want, its SHA-256 (a file of another size is not read). It stops when
// ctx is done.
func sumFile(ctx context.Context, path string, want int64) (fileSum, error) {
	f, fi, err := safefile.Open(path, os.O_RDONLY, 0)
	var nr *safefile.NotRegularError
	switch {
	case errors.As(err, &nr):
		return fileSum{}, clierr.Usagef("%s is not a regular file", path)
	case err != nil:
		return fileSum{}, clierr.Usagef("comparing the file there with the export: %v", err)
	}
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	if fi.Size() != want {
		return fileSum{size: fi.Size()}, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return fileSum{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return fileSum{size: fi.Size(), sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context //nolint:containedctx // the reader lives for one io.Copy within the call
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
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
	return o.checkOutFile(true)
}

// report prints what was written, or, when downloaded is false, that the
// file held the export already: on stdout, or on stderr when stdout
// carries the export.
func (o *DownloadOptions) report(m *synthient.ExportMeta, downloaded bool) error {
	p := o.Printer
	w := p.Out
	if o.toStdout() {
		w = o.Err
	}
	if p.JSON() {
		return p.EmitTo(w, struct {
			File       string                `json:"file"`
			Downloaded bool                  `json:"downloaded"`
			Verified   bool                  `json:"verified"`
			Meta       *synthient.ExportMeta `json:"meta"`
		}{o.Out, downloaded, o.Verify || !downloaded, m})
	}
	if !downloaded {
		_, err := fmt.Fprintf(w, "%s already holds %s %s (its size and SHA-256): nothing downloaded\n",
			textsafe.EscapeCell(o.Out), textsafe.EscapeCell(m.Stream), textsafe.EscapeCell(m.ID))
		return err
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
	return checkOutFile(path, "--out "+path, "--out - writes to stdout, which can be redirected")
}

// checkOutFile is CheckOutFile of o's file, in the words of the form the
// user typed: --out FILE (named: the user gave it) or FILE, and how to
// write to stdout, which download takes no flag for.
func (o *DownloadOptions) checkOutFile(named bool) error {
	what, useStdout := o.Out, "--out - writes to stdout, which can be redirected"
	switch {
	case o.official:
		toStdout := *o
		toStdout.Out = "-"
		useStdout = "exports download writes to stdout" + toStdout.suggest(true)
	case named:
		what = "--out " + o.Out
	}
	return checkOutFile(o.Out, what, useStdout)
}

// checkOutFile is CheckOutFile of path, which what names in its errors;
// useStdout says how to write to stdout instead.
func checkOutFile(path, what, useStdout string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG):
		return clierr.Usagef("%s: %v", what, syscall.ENAMETOOLONG)
	case err != nil, fi.Mode().IsRegular():
		return nil //nolint:nilerr // a path that does not exist yet, or one the SDK reports on
	case fi.Mode()&fs.ModeSymlink != 0:
		return clierr.Usagef("%s is a symbolic link: refusing to replace it (name the file it points to; %s)", what, useStdout)
	case fi.IsDir():
		return clierr.Usagef("%s is a directory, not a regular file", what)
	}
	return clierr.Usagef("%s is not a regular file (a device, a named pipe or a socket): refusing to replace it (%s)", what, useStdout)
}
