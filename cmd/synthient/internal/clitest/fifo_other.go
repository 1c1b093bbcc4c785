//go:build !unix

package clitest

import "testing"

// MakeFIFO fails the test: named pipes in a file system are Unix's, and
// the tests that make one run on Unix only.
func MakeFIFO(t *testing.T, path string) {
	t.Helper()
	t.Fatalf("cannot make a named pipe at %s: named pipes in a file system are Unix's", path)
}
