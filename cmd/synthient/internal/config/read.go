package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/synthient-go/synthient/internal/safefile"
)

// readRegular reads the settings file at path: a regular file of at most
// limit bytes, or a *FileError naming it. It never blocks and never reads
// more than limit+1 bytes, whatever the file is: it opens it with
// safefile.Open (a named pipe without a writer opens at once, and what
// is not a regular file is refused: a named pipe, a directory, a device
// such as /dev/zero behind a link, a socket), refuses a file whose size
// is over limit before reading it (a sparse file of 64 GiB), and reads
// through an io.LimitReader in case it grew. A missing file is an error
// matching fs.ErrNotExist; fi is the file's fstat, for its mode.
func readRegular(path string, limit int64) (b []byte, fi fs.FileInfo, err error) {
	f, fi, err := openRegular(path, os.O_RDONLY, 0, "refused")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	if fi.Size() > limit {
		return nil, nil, tooLarge(path, limit)
	}
	b, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, &FileError{Path: path, Msg: "reading it: " + err.Error()}
	}
	if int64(len(b)) > limit {
		return nil, nil, tooLarge(path, limit)
	}
	return b, fi, nil
}

// openRegular opens path as safefile.Open does; its refusal of what is
// not a regular file is a *FileError that ends with refusal ("refused").
func openRegular(path string, flag int, perm fs.FileMode, refusal string) (*os.File, fs.FileInfo, error) {
	f, fi, err := safefile.Open(path, flag, perm)
	if nr := (*safefile.NotRegularError)(nil); errors.As(err, &nr) {
		return nil, nil, &FileError{Path: path, Msg: "not a regular file (" + safefile.Kind(nr.Mode) + "): " + refusal}
	}
	return f, fi, err
}

func tooLarge(path string, limit int64) error {
	return &FileError{Path: path, Msg: fmt.Sprintf("larger than %d bytes: refused", limit)}
}
