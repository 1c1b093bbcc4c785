//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package safefile

import (
	"errors"
	"os"
)

// lock is not supported here: Lock and TryLock return
// errors.ErrUnsupported.
func lock(*os.File, bool) error { return errors.ErrUnsupported }

func unlock(*os.File) error { return errors.ErrUnsupported }
