package download

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// MaxNameLen is the longest file name the common file systems take.
const MaxNameLen = 255

// ErrAppeared is Commit's error when a file appeared at the target during
// the download, which is kept. It matches fs.ErrExist.
var ErrAppeared = fmt.Errorf("a file appeared at the target: %w", fs.ErrExist)

// CreatePart creates the temporary file of a download to path, new and
// empty, in path's directory, with mode 0644 before the umask (as
// os.Create makes a file; os.CreateTemp would give 0600).
func CreatePart(path string) (*os.File, error) {
	for range 100 {
		digits := strconv.FormatUint(uint64(rand.Uint32()), 10) //nolint:gosec // digits that make a taken name unlikely: O_EXCL refuses one that is
		name := path + "." + digits + ".part"
		if len(filepath.Base(name)) > MaxNameLen {
			name = filepath.Join(filepath.Dir(path), ".synthient-"+digits+".part")
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) //nolint:gosec // beside the path the caller asked to write
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "open", Path: path + ".*.part", Err: fs.ErrExist}
}

// Commit moves the finished temporary file part to path, replacing a file
// there only when overwrite is set. It returns ErrAppeared for a file that
// appeared at path meanwhile, or the error of the rename.
func Commit(part, path string, overwrite bool) error {
	if overwrite {
		return os.Rename(part, path)
	}
	if err := os.Link(part, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return ErrAppeared
		}
		// No hard links here: check, then rename.
		if _, serr := os.Lstat(path); serr == nil {
			return ErrAppeared
		}
		return os.Rename(part, path)
	}
	// The file is at path: a part a failed Remove leaves is litter, not
	// a failed download.
	_ = os.Remove(part)
	return nil
}

// FileKind names the kind of file of mode, for an error that refuses it:
// "a symbolic link", "a named pipe", "a socket", "a device" or "something
// else".
func FileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "something else"
}
