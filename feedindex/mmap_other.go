//go:build !unix

package feedindex

import (
	"fmt"
	"os"
)

// mapFile reads the file at path into memory: this system has no mapping
// this package uses.
func mapFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, formatError(path, -1, fmt.Errorf("%w: not a regular file", ErrNotIndex))
	}
	return os.ReadFile(path) //nolint:gosec // the caller names the file to open: that is what Open is for
}

func unmap([]byte) {}

func attachUnmap(*mapping) {}
