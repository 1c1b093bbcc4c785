package exports

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	opts := &DownloadOptions{Client: f.Client, official: true}
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
for an hourly one; else the one FILE's name holds (proxies-2026-06-09.parquet,
proxies-2026-06-09-13.parquet), or latest. An export given that is not the one
FILE's name holds is refused. Where FILE's name names no feed, the official
CLI took the anonymizers feed: name the feed. FILE is the last argument: there
is no --out (-o is the output format), and exports download --out - writes to
stdout.`,
		Args: func(cmd *cobra.Command, args []string) error {
			return opts.officialArgs(args, cmd.Flags().Lookup("output"))
		},
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
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "unknown flag: --out") {
			err = fmt.Errorf("%w: download writes the file its last argument names (download [FEED [ID]] FILE.parquet); "+
				"--out is exports download's flag (exports download FEED [ID] --out FILE)", err)
		}
		return &clierr.Error{Code: clierr.Usage, Err: err, Hint: true}
	})
	return cmd
}

// officialArgs reads download's arguments into o: FEED, ID and FILE, the
// feed from FILE's name when it is the only one. What it cannot take is a
// usage error that gives the command doing it, when one can. output is
// the global --output flag, whose -o the official CLI gave the file.
func (o *DownloadOptions) officialArgs(args []string, output *pflag.Flag) error {
	if output != nil && output.Changed && strings.HasSuffix(output.Value.String(), ".parquet") {
		return o.outputFile(args, output.Value.String())
	}
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
				"to download the anonymizers feed there, as the official CLI does%s",
				filepath.Base(file), o.suggest(false))
		}
		o.Feed = string(feed)
	case 2:
		o.Feed = args[0]
	case 3:
		o.Feed, o.ID = args[0], args[1]
	}
	return nil
}

// outputFile is the error of download given -o FILE.parquet, the
// official CLI's flag of the file, which is the output format here: the
// command with FILE last, when the arguments are FEED [ID].
func (o *DownloadOptions) outputFile(args []string, file string) error {
	msg := fmt.Sprintf("-o (--output) is the output format here (text, json or csv), not the file: download writes the file its last argument names, %s", file)
	if len(args) <= 2 && !slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, ".parquet") }) {
		o.Out = file
		if len(args) > 0 {
			o.Feed = args[0]
		} else if feed, ok := feedOfFile(file); ok {
			o.Feed = string(feed)
		}
		if len(args) == 2 {
			o.ID = args[1]
		}
		msg += o.suggest(false)
	}
	return argsError("%s", msg)
}

// notParquet is the error of download arguments whose last is not a
// FILE.parquet: the exports download command that does what they ask,
// when the other arguments are a FEED and an ID it can take.
func (o *DownloadOptions) notParquet(args []string) error {
	last := args[len(args)-1]
	switch {
	case len(args) == 1:
		o.Feed = last
		if o.runnable() {
			return argsError("%q is not a FILE.parquet: to download the %s feed's latest export to %s-<id>.parquet%s",
				last, last, last, o.suggest(true))
		}
	case len(args) == 2 && isExportID(last):
		// FEED ID without the FILE: exports download names the file.
		o.Feed, o.ID = args[0], last
		if o.runnable() {
			return argsError("%q is an export, and no FILE.parquet follows it: to download it to %s-<id>.parquet%s",
				last, args[0], o.suggest(true))
		}
	default:
		o.Feed, o.Out = args[0], last
		if len(args) == 3 {
			o.ID = args[1]
		}
		if o.runnable() {
			return argsError("%q is not a FILE.parquet%s", last, o.suggest(true))
		}
	}
	return argsError("%q is not a FILE.parquet: download takes [FEED [ID]] FILE.parquet, FILE last", last)
}

// isExportID reports whether s is an export id: latest, YYYY-MM-DD or
// YYYY-MM-DD/HH.
func isExportID(s string) bool {
	_, ok := canonicalID(s)
	return ok
}

// runnable reports whether the command o describes runs, as far as its
// form goes: a feed, and an export it can take (an ID or --date, and not
// both; not another than FILE's name holds).
func (o DownloadOptions) runnable() bool {
	if _, err := synthient.ParseFeed(o.Feed); err != nil {
		return false
	}
	if o.ID != "" && !isExportID(o.ID) {
		return false
	}
	return o.resolveID() == nil // o is a copy: its ID may change
}

// suggest is ": synthient COMMAND" for the command o describes, as
// exports download takes it when exports is set, else as download does;
// "" when that command would not run (runnable).
func (o *DownloadOptions) suggest(exports bool) string {
	if !o.runnable() {
		return ""
	}
	return ": synthient " + strings.Join(o.words(exports), " ")
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
