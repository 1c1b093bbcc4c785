package exports

// exports head and exports schema: what an export file holds, from a file
// or from the API.

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/exports"
)

// exportSource is the help both commands share on their arguments.
const exportSource = `FILE is a Parquet file, such as one that exports download wrote. With FEED ID
instead, the export is downloaded first, its SHA-256 verified, to a temporary
file that is removed afterwards.`

// Source is the export that head and schema read: FILE, or FEED ID.
type Source struct {
	Client func(...synthient.Option) (*synthient.Client, error)
	Bar    io.Writer // where a download's progress bar draws; nil for none
	Args   []string  // FILE, or FEED ID
}

// completeSource completes FILE with file names, and after a feed name
// the export ID.
func (x *exportIDs) completeSource(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	if _, err := synthient.ParseFeed(args[0]); err != nil || len(args) > 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return x.complete(cmd, args, typed)
}

// open opens the export that s names: FILE, or FEED ID, which it
// downloads first (see exportSource). done closes the file and removes
// the download.
func (s *Source) open(ctx context.Context) (f *exports.File, done func(), err error) {
	args := s.Args
	if len(args) == 1 {
		f, err := openFile(args[0])
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	}
	if _, err := synthient.ParseFeed(args[0]); err != nil {
		return nil, nil, clierr.Usagef("%q is not a feed: give one FILE, or a FEED (%s) and an export ID", args[0], strings.Join(cmdutil.FeedNames(), ", "))
	}
	feed, err := cmdutil.ParseFeed(args[0])
	if err != nil {
		return nil, nil, err
	}
	c, err := s.Client()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "synthient-export-")
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, "export.parquet")
	p := &synthient.DownloadParams{Verify: true}
	finish := downloadProgress(s.Bar, p)
	_, err = c.DownloadExportFile(ctx, feed, args[1], path, p)
	finish()
	if err == nil {
		f, err = exports.Open(path)
	}
	// Removing the temporary directory is tidying up: a failure leaves
	// it in the system's temporary directory and changes nothing shown.
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	return f, func() { f.Close(); _ = os.RemoveAll(dir) }, nil
}

// openFile opens the export file name, given as FILE. A name that is no
// file, is not a regular file (Parquet is read from its end: a pipe
// cannot be), or is not a Parquet file, is a usage error (exit 2).
func openFile(name string) (*exports.File, error) {
	info, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, ferr := synthient.ParseFeed(name); ferr == nil {
			return nil, clierr.Usagef("no file %s: for a feed's export, give its ID too (%s latest)", name, name)
		}
		return nil, clierr.Usagef("no file %s", name)
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, clierr.Usagef("%s is a directory, not an export file", name)
	case !info.Mode().IsRegular():
		return nil, clierr.Usagef("%s is not a regular file: a Parquet file is read from its end, so save it first (exports download --out FILE)", name)
	}
	f, err := exports.Open(name)
	var fe *exports.FormatError
	if errors.As(err, &fe) {
		return nil, clierr.New(clierr.Usage, err)
	}
	return f, err
}
