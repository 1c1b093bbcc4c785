package exports

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// NewCmdOfficialDownload returns download, the official Synthient CLI's
// form of exports download: download [FEED [ID]] FILE.parquet. runF, when
// not nil, runs in place of the command's own run function, given the
// options once they are parsed and checked.
func NewCmdOfficialDownload(f *cmdutil.Factory, runF func(context.Context, *DownloadOptions) error) *cobra.Command {
	opts := &DownloadOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "download [FEED [ID]] FILE.parquet [--date D [--hour H]]",
		Short: "Download one export to FILE.parquet, as the official Synthient CLI's download does",
		Long: `download takes the official Synthient CLI's forms, and downloads as
exports download does (FILE never holds a partial file; a FILE that already
holds the export is left as it is; one that holds anything else is kept unless
--force):

  download FILE.parquet          the feed is FILE's name (proxies.parquet), or
                                 its part before the first - (proxies-2026-06-09.parquet)
  download FEED FILE.parquet
  download FEED ID FILE.parquet

The export is ID, or --date D (YYYY-MM-DD, or latest) with --hour H (0 to 23)
for an hourly one; latest when none is given. Where FILE's name names no feed,
the official CLI took the anonymizers feed: name the feed.`,
		Args: func(_ *cobra.Command, args []string) error { return opts.officialArgs(args) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer, opts.RawOut, opts.Err = f.Printer, f.IO.RawOut, f.IO.ErrOut
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
	cmd.Flags().StringVarP(&opts.Date, "date", "d", "", "the day of the export, YYYY-MM-DD, or latest (in place of ID)")
	cmd.Flags().IntVar(&opts.Hour, "hour", -1, "with --date: the hour of an hourly export, 0 to 23")
	cmd.Flags().BoolVar(&opts.Verify, "verify", false, "check the SHA-256 against the export's meta")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite a file that holds anything but the export")
	var noPreflight bool
	cmd.Flags().BoolVar(&noPreflight, "no-preflight", false, "taken for the official CLI; there is no scope check to skip")
	_ = cmd.Flags().MarkHidden("no-preflight") // the flag was just defined
	cmdutil.SetExamples(cmd, "synthient download anonymizers.parquet --date 2026-06-09",
		"synthient download proxies p.parquet -d 2026-06-10 --hour 13", "synthient download torrents latest t.parquet --verify")
	return cmd
}

// officialArgs reads download's arguments into o: FEED, ID and FILE, the
// feed from FILE's name when it is the only one. What it cannot take is a
// usage error that gives the command doing it.
func (o *DownloadOptions) officialArgs(args []string) error {
	if len(args) == 0 {
		return argsError("download takes [FEED [ID]] FILE.parquet, as the official Synthient CLI does; " +
			"the command here is: synthient exports download FEED [ID | --date D [--hour H]] [--out FILE]")
	}
	if len(args) > 3 {
		return argsError("too many arguments (%d): download takes [FEED [ID]] FILE.parquet", len(args))
	}
	file := args[len(args)-1]
	if !strings.HasSuffix(file, ".parquet") {
		return o.notParquet(args)
	}
	o.Out = file
	switch len(args) {
	case 1:
		feed, ok := feedOfFile(file)
		if !ok {
			o.Feed = "anonymizers"
			return argsError("download FILE takes the feed from FILE's name, and %q names no feed: "+
				"to download the anonymizers feed there, as the official CLI does: synthient %s",
				filepath.Base(file), strings.Join(o.words(false), " "))
		}
		o.Feed = string(feed)
	case 2:
		o.Feed = args[0]
	case 3:
		o.Feed, o.ID = args[0], args[1]
	}
	return nil
}

// notParquet is the error of download arguments whose last is not a
// FILE.parquet: the exports download command that does what they ask.
func (o *DownloadOptions) notParquet(args []string) error {
	last := args[len(args)-1]
	switch len(args) {
	case 1:
		o.Feed = last
		if _, err := synthient.ParseFeed(last); err == nil {
			return argsError("%q is not a FILE.parquet: to download the %s feed's latest export to %s-<id>.parquet: synthient %s",
				last, last, last, strings.Join(o.words(true), " "))
		}
		return argsError("%q is not a FILE.parquet: download takes [FEED [ID]] FILE.parquet", last)
	case 3:
		o.ID = args[1]
	}
	o.Feed, o.Out = args[0], last
	return argsError("%q is not a FILE.parquet: synthient %s", last, strings.Join(o.words(true), " "))
}

// words returns the arguments of the command o describes, each quoted for
// a POSIX shell where it needs it: as exports download takes them when
// exports is set, else as download does (FEED FILE, the flags after).
func (o *DownloadOptions) words(exports bool) []string {
	w := []string{"download", o.Feed}
	if exports {
		w = append([]string{"exports"}, w...)
	}
	if o.ID != "" {
		w = append(w, o.ID)
	}
	if !exports {
		w = append(w, o.Out)
	}
	if o.Date != "" {
		w = append(w, "--date", o.Date)
	}
	if o.Hour >= 0 {
		w = append(w, "--hour", strconv.Itoa(o.Hour))
	}
	if o.Verify {
		w = append(w, "--verify")
	}
	if o.Force {
		w = append(w, "--force")
	}
	if exports && o.Out != "" {
		w = append(w, "--out", o.Out)
	}
	for i, s := range w {
		w[i] = render.ShellWord(s)
	}
	return w
}

// feedOfFile returns the feed a FILE.parquet names: its name without the
// extension, or the part of it before the first "-".
func feedOfFile(file string) (synthient.Feed, bool) {
	name := strings.TrimSuffix(filepath.Base(file), ".parquet")
	if f, err := synthient.ParseFeed(name); err == nil {
		return f, true
	}
	before, _, found := strings.Cut(name, "-")
	if !found {
		return "", false
	}
	f, err := synthient.ParseFeed(before)
	return f, err == nil
}

// argsError is a usage error of download's arguments, which points to its
// help.
func argsError(format string, args ...any) error {
	return &clierr.Error{Code: clierr.Usage, Hint: true, Err: fmt.Errorf(format, args...)}
}
