package iostreams_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// StdoutClosed tells a write to stdout whose reader is gone (EPIPE) from
// any other error: another errno, another file's EPIPE, a network write's
// EPIPE (the SDK's).
func TestStdoutClosed(t *testing.T) {
	t.Parallel()
	w := clitest.ClosedPipe(t)
	s := iostreams.New(iostreams.System{Stdout: w, Stderr: io.Discard}, &redact.Redactor{})
	_, writeErr := w.Write([]byte("x\n"))
	require.ErrorIs(t, writeErr, syscall.EPIPE, "a write to a pipe whose reader is closed")
	other := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"stdout's EPIPE", writeErr, true},
		{"wrapped", errors.Join(errors.New("printing"), writeErr), true},
		{"no space on stdout", &fs.PathError{Op: "write", Path: w.Name(), Err: syscall.ENOSPC}, false},
		{"another file's EPIPE", &fs.PathError{Op: "write", Path: other, Err: syscall.EPIPE}, false},
		{"a network write's EPIPE", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, s.StdoutClosed(tt.err))
		})
	}
	// A stdout that is not a file (a test's buffer) is never closed so.
	buf := iostreams.New(iostreams.System{Stdout: io.Discard, Stderr: io.Discard}, &redact.Redactor{})
	assert.False(t, buf.StdoutClosed(writeErr))
}
