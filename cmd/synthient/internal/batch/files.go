package batch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
)

// List is an output file of addresses, one per line (--failed,
// --unknown). A nil *List, for a flag not given, writes nothing.
type List struct {
	flag, name string
	f          *os.File
	w          *bufio.Writer
	regular    bool // a regular file, emptied for this run; else written as it is
}

// CreateLists creates the --failed and --unknown files named failedName
// and unknownName ("" for a flag not given). Both are opened before
// either is emptied: when one cannot be, the other keeps what it held
// (the addresses of an earlier run, say). A file that is not a regular
// one (a named pipe, a device such as /dev/null or a terminal) is
// written as it is, not emptied; a named pipe with no reader yet is
// waited for, until ctx ends (an interrupt: its error is returned).
func CreateLists(ctx context.Context, failedName, unknownName string) (failed, unknown *List, err error) {
	if failed, err = openList(ctx, "--failed", failedName); err != nil {
		return nil, nil, err
	}
	if unknown, err = openList(ctx, "--unknown", unknownName); err != nil {
		_ = failed.Close() // nothing written to it: err is what went wrong
		return nil, nil, err
	}
	for _, l := range []*List{failed, unknown} {
		if err := l.empty(); err != nil {
			_ = failed.Close() // nothing written to either: err is what went wrong
			_ = unknown.Close()
			return nil, nil, err
		}
	}
	return failed, unknown, nil
}

// openList opens, or creates, the file name of flag without emptying it,
// or returns nil when name is empty. It opens with O_NONBLOCK, so that
// open(2) cannot block on a named pipe; one that has no reader yet is
// opened again, waiting for a reader until ctx ends. A file that cannot
// be opened for writing is a usage error.
func openList(ctx context.Context, flag, name string) (*List, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o666) //nolint:gosec // the file the user named, made as os.Create makes one
	if errors.Is(err, syscall.ENXIO) && isNamedPipe(name) {
		f, err = interrupt.Do(ctx, func() (*os.File, error) {
			return os.OpenFile(name, os.O_WRONLY, 0) //nolint:gosec // the named pipe the user named, once it has a reader
		}, func(f *os.File) { _ = f.Close() }) // abandoned before anything was written: closing it loses nothing
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, clierr.Usagef("%s: %v", flag, err)
	}
	l := &List{flag: flag, name: name, f: f, w: bufio.NewWriter(f)}
	if fi, err := f.Stat(); err == nil {
		l.regular = fi.Mode().IsRegular()
	}
	return l, nil
}

// isNamedPipe reports whether name is a named pipe.
func isNamedPipe(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode()&fs.ModeNamedPipe != 0
}

// empty truncates a regular file, for a list that is to hold this run's
// addresses only.
func (l *List) empty() error {
	if l == nil || !l.regular {
		return nil
	}
	if err := l.f.Truncate(0); err != nil {
		return clierr.Usagef("%s: %v", l.flag, err)
	}
	return nil
}

// Add writes ip as a line; a write error is kept for Close.
func (l *List) Add(ip netip.Addr) {
	if l != nil {
		// A bufio.Writer keeps its first error, and Flush, in Close,
		// returns it.
		_, _ = l.w.WriteString(ip.String())
		_ = l.w.WriteByte('\n')
	}
}

// Close flushes and closes the file, and returns the first error writing
// it.
func (l *List) Close() error {
	if l == nil {
		return nil
	}
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s %s: %w", l.flag, l.name, err)
	}
	return nil
}

// hint is " (in --flag NAME)", or "" for a flag not given.
func (l *List) hint() string {
	if l == nil {
		return ""
	}
	return " (in " + l.flag + " " + l.name + ")"
}

// CheckNotInput refuses an output file (flag names it) that is the input
// itself, by any path, hard link or symbolic link (or, with --file -, the
// file stdin was redirected from): creating it would empty the input
// before it is read, and a journal's records would go into it.
func CheckNotInput(flag, name string, in io.Reader) error {
	if !namesStreamFile(name, in) {
		// A pipe or a terminal cannot be checked: a pipe fed from the
		// output file itself (cat f | synthient lookup ips --file -
		// --failed f) loses what cat had not read yet when f is created,
		// and nothing here can tell what feeds a pipe. Nor can an input
		// that cannot be stat'ed.
		return nil
	}
	harm := "writing it would empty the addresses before they are read"
	if flag == "--journal" {
		harm = "its records would be written among the addresses"
	}
	return clierr.Usagef("%s %s is the input file: %s; name another file", flag, name, harm)
}

// CheckNotStdStreams refuses an output file (flag names it) that is the
// regular file stdout (out) or stderr (errOut) writes to, by any path
// (/dev/stdout with >> results, /dev/stderr with 2>> log): emptying it
// (--failed, --unknown) would lose what is in it, and a journal's records
// would overwrite the output, which the journal could then not be read
// back from.
func CheckNotStdStreams(flag, name string, out, errOut io.Writer) error {
	for _, s := range []struct {
		name, holds string
		w           io.Writer
	}{{"stdout", "the results", out}, {"stderr", "the messages", errOut}} {
		if !namesStreamFile(name, s.w) {
			continue
		}
		harm := "emptying it would lose " + s.holds + " in it"
		if flag == "--journal" {
			harm = "its records would overwrite " + s.holds + " written there"
		}
		return clierr.Usagef("%s %s is the file %s writes to: %s; name another file", flag, name, s.name, harm)
	}
	return nil
}

// namesStreamFile reports whether the file name exists and is the
// regular file that stream (an *os.File) reads or writes. A stream that
// is not an *os.File, or cannot be stat'ed, is not known to be one.
func namesStreamFile(name string, stream any) bool {
	f, ok := stream.(*os.File)
	if name == "" || !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	named, err := os.Stat(name)
	return err == nil && os.SameFile(info, named)
}

// SameFile reports whether the paths a and b name the same file: the
// same file when both exist, else the same path once the symbolic links
// of their directories are resolved.
func SameFile(a, b string) bool {
	ai, aErr := os.Stat(a)
	bi, bErr := os.Stat(b)
	if aErr == nil && bErr == nil {
		return os.SameFile(ai, bi)
	}
	return canonicalPath(a) == canonicalPath(b)
}

// canonicalPath is name made absolute, its directory's symbolic links
// resolved where they can be.
func canonicalPath(name string) string {
	abs, err := filepath.Abs(name)
	if err != nil {
		return name
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return abs
	}
	return filepath.Join(dir, filepath.Base(abs))
}
