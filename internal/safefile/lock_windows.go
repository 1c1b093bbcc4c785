package safefile

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte LockFileEx locks: far past the end of any file,
// so that the lock, which on Windows holds off other handles' reads and
// writes of what it covers, covers none of the file's bytes.
const lockOffset = 1 << 62

// lock takes LockFileEx on f's byte at lockOffset: exclusive, and waiting
// when wait is set.
func lock(f *os.File, wait bool) error {
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK)
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	return control(f, func(fd uintptr) error {
		return windows.LockFileEx(windows.Handle(fd), flags, 0, 1, 0, overlapped())
	})
}

func unlock(f *os.File) error {
	return control(f, func(fd uintptr) error {
		return windows.UnlockFileEx(windows.Handle(fd), 0, 1, 0, overlapped())
	})
}

// overlapped gives the offset of the locked byte.
func overlapped() *windows.Overlapped {
	return &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
}
