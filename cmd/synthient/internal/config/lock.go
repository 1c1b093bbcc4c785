package config

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on the file at path, created with
// mode 0600 when it is missing, waiting while another process (or
// another lockFile of this one) holds it, and returns the function that
// releases it. The file is left in place: removing a lock file lets two
// processes hold locks on two files of one name. A path that is not a
// regular file is a *FileError.
func lockFile(path string) (unlock func(), err error) {
	//nolint:gosec // the lock file beside credentials.toml, in the configuration directory
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &FileError{Path: path, Msg: "not a regular file (" + kind(fi.Mode()) + "): refused as a lock file"}
	}
	for err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
		err = nil
	}
	if err != nil {
		_ = f.Close() // the lock's error is the one to report
		return nil, err
	}
	return func() { _ = f.Close() }, nil // closing the file releases the lock
}
