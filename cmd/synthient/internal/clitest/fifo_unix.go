//go:build unix

package clitest

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// MakeFIFO creates a named pipe at path.
func MakeFIFO(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o644))
}
