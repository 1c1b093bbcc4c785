package config

import (
	"os"

	"github.com/synthient-go/synthient/internal/safefile"
)

// lockFile takes an exclusive lock (safefile.Lock) on the file at path,
// created with mode 0600 when it is missing, waiting while another
// process (or another lockFile of this one) holds it, and returns the
// function that releases it. The file is left in place: removing a lock
// file lets two processes hold locks on two files of one name. A path
// that is not a regular file is a *FileError.
func lockFile(path string) (unlock func(), err error) {
	f, _, err := openRegular(path, os.O_RDWR|os.O_CREATE, 0o600, "refused as a lock file")
	if err != nil {
		return nil, err
	}
	if err := safefile.Lock(f); err != nil {
		_ = f.Close() // the lock's error is the one to report
		return nil, err
	}
	return func() {
		// Closing the file releases the lock; unlocking first releases it
		// at once on Windows, where a close may release it later.
		_ = safefile.Unlock(f) // the close below releases it anyway
		_ = f.Close()          // opened for the lock only: nothing written
	}, nil
}
