package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// readRegular reads the settings file at path: a regular file of at most
// limit bytes, or a *FileError naming it. It never blocks and never reads
// more than limit+1 bytes, whatever the file is: it opens with O_NONBLOCK
// (a named pipe without a writer opens at once), refuses what fstat says
// is not a regular file (a named pipe, a directory, a device such as
// /dev/zero behind a link, a socket), refuses a file whose size is over
// limit before reading it (a sparse file of 64 GiB), and reads through an
// io.LimitReader in case it grew. A missing file is an error matching
// fs.ErrNotExist; fi is the file's fstat, for its mode.
func readRegular(path string, limit int64) (b []byte, fi fs.FileInfo, err error) {
	//nolint:gosec // a settings file of the CLI (.env, config.toml, credentials.toml): reading it is the point
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	fi, err = f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if err := checkRegular(path, fi, limit); err != nil {
		return nil, nil, err
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

// checkRegular refuses a file that is not a regular file, or larger than
// limit.
func checkRegular(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return &FileError{Path: path, Msg: "not a regular file (" + kind(fi.Mode()) + "): refused"}
	}
	if fi.Size() > limit {
		return tooLarge(path, limit)
	}
	return nil
}

func tooLarge(path string, limit int64) error {
	return &FileError{Path: path, Msg: fmt.Sprintf("larger than %d bytes: refused", limit)}
}

// kind names the type of a file that is not a regular one.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}
