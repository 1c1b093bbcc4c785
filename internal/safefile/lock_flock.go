//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package safefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lock takes flock(2) on f: exclusive, and waiting when wait is set.
func lock(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	return control(f, func(fd uintptr) error {
		for {
			err := unix.Flock(int(fd), how)
			if !errors.Is(err, unix.EINTR) {
				return err
			}
		}
	})
}

func unlock(f *os.File) error {
	return control(f, func(fd uintptr) error {
		return unix.Flock(int(fd), unix.LOCK_UN)
	})
}
