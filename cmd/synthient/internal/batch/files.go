package batch

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
)

// List is an output file of addresses, one per line (--failed,
// --unknown). A nil *List, for a flag not given, writes nothing.
type List struct {
	flag, name string
	f          *os.File
	w          *bufio.Writer
}

// CreateLists creates the --failed and --unknown files named failedName
// and unknownName ("" for a flag not given). Both are opened before
// either is emptied: when one cannot be, the other keeps what it held
// (the addresses of an earlier run, say).
func CreateLists(failedName, unknownName string) (failed, unknown *List, err error) {
	if failed, err = openList("--failed", failedName); err != nil {
		return nil, nil, err
	}
	if unknown, err = openList("--unknown", unknownName); err != nil {
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
// or returns nil when name is empty. A file that cannot be opened for
// writing is a usage error.
func openList(flag, name string) (*List, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o666) //nolint:gosec // the file the user named, made as os.Create makes one
	if err != nil {
		return nil, clierr.Usagef("%s: %v", flag, err)
	}
	return &List{flag: flag, name: name, f: f, w: bufio.NewWriter(f)}, nil
}

// empty truncates the file, for a list that is to hold this run's
// addresses only.
func (l *List) empty() error {
	if l == nil {
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
// before it is read.
func CheckNotInput(flag, name string, in io.Reader) error {
	f, ok := in.(*os.File)
	if name == "" || !ok {
		return nil
	}
	inInfo, err := f.Stat()
	if err != nil || !inInfo.Mode().IsRegular() {
		// A pipe or a terminal cannot be checked: a pipe fed from the
		// output file itself (cat f | synthient lookup ips --file -
		// --failed f) loses what cat had not read yet when f is created,
		// and nothing here can tell what feeds a pipe. Nor can an input
		// that cannot be stat'ed.
		return nil //nolint:nilerr // unchecked, as above: the run reads it and reports its errors
	}
	outInfo, err := os.Stat(name)
	if err != nil || !os.SameFile(inInfo, outInfo) {
		return nil //nolint:nilerr // no file there is not the input; creating it reports any other error
	}
	return clierr.Usagef("%s %s is the input file: writing it would empty the addresses before they are read", flag, name)
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
