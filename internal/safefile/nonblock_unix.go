//go:build unix

package safefile

import "syscall"

// nonblock is the flag that keeps open(2) from waiting on a named pipe.
const nonblock = syscall.O_NONBLOCK
