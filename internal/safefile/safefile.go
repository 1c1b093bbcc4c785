// Package safefile opens the files a program must not trust to be what
// their names say: a settings file a cloned repository may have made a
// named pipe or a link to /dev/zero, a journal or a lock file the user
// named. Open never blocks on what it finds and refuses anything but a
// regular file; Lock and TryLock take an exclusive lock on a file Open
// returned, which holds across processes.
package safefile

import (
	"io/fs"
	"os"
)

// Open opens the file at path with flag and perm, as os.OpenFile does,
// and returns it with its FileInfo when it is a regular file. Opening
// never blocks: on Unix O_NONBLOCK is added, so that a named pipe with no
// writer opens at once (for a regular file it changes nothing); Windows
// has no named pipes in its file systems. What the opened file's Stat
// says is not a regular file (a named pipe, a device, a directory, a
// socket; a symbolic link is followed) is closed and refused with a
// *NotRegularError. A path that cannot be opened gives os.OpenFile's
// error, which errors.Is(err, fs.ErrNotExist) for a missing file.
func Open(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flag|nonblock, perm) //nolint:gosec // the file the caller names: checking it is the point
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err != nil {
		_ = f.Close() // nothing was read or written: err is what went wrong
		return nil, nil, err
	}
	return f, fi, nil
}

// NotRegularError is Open's refusal of a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode // the mode of what is there
}

func (e *NotRegularError) Error() string {
	return e.Path + ": not a regular file (" + Kind(e.Mode) + ")"
}

// Kind names the type of a file of mode m: "a directory", "a named
// pipe", "a socket", "a character device", "a block device", "a symbolic
// link", "a regular file", else "mode" and m.
func Kind(m fs.FileMode) string {
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
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "mode " + m.String()
}

// Lock takes an exclusive lock on f, waiting while another holds it:
// another process, or another file of this one opened on the same path.
// Closing f (or Unlock) releases it. It is advisory: it keeps out only
// those who take it too, and leaves reads and writes of the file free,
// also on Windows, where the lock is on a byte far past the end of any
// file (Windows' locks hold off the reads and writes of what they cover).
func Lock(f *os.File) error { return lock(f, true) }

// TryLock takes the lock Lock takes when no one holds it, and returns an
// error at once otherwise (EWOULDBLOCK on Unix, ERROR_LOCK_VIOLATION on
// Windows).
func TryLock(f *os.File) error { return lock(f, false) }

// Unlock releases the lock of Lock or TryLock; closing f releases it too.
func Unlock(f *os.File) error { return unlock(f) }

// control runs fn on f's descriptor, and returns fn's error, or the
// error of reaching the descriptor.
func control(f *os.File, fn func(fd uintptr) error) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) { ferr = fn(fd) }); err != nil {
		return err
	}
	return ferr
}
