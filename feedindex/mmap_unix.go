//go:build unix

package feedindex

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// mapFile maps the file at path read-only; an empty file is an empty
// slice.
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path) //nolint:gosec // the caller names the file to open: that is what Open is for
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only; the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, formatError(path, -1, fmt.Errorf("%w: not a regular file", ErrNotIndex))
	}
	size := fi.Size()
	if size == 0 {
		return []byte{}, nil
	}
	if int64(int(size)) != size {
		return nil, formatError(path, -1, fmt.Errorf("a file of %d bytes, too large to map", size))
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return data, nil
}

// unmap releases a mapping of mapFile.
func unmap(data []byte) {
	if len(data) > 0 {
		_ = syscall.Munmap(data) // nothing to do about a failure: the pages stay mapped
	}
}

// attachUnmap unmaps m's data once m is unreachable: a lookup holds the
// snapshot, which holds m, while it reads the tables.
func attachUnmap(m *mapping) {
	runtime.AddCleanup(m, unmap, m.data)
}
