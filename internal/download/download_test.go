package download_test

// Tests of download.go: the copy stops at the expected size and tells a
// failed read from a failed write; Checked hashes and counts.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/download"
)

// writerFunc is an io.Writer of a function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestCopy(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 100_000) // 1 MB: several buffers
	cut := errors.New("reset")
	for _, tc := range []struct {
		name      string
		body      io.Reader
		want      int64
		n         int64
		over      bool
		readErr   error
		truncated bool // w holds fewer bytes than n says were read
	}{
		{"all, no cap", strings.NewReader(body), -1, int64(len(body)), false, nil, false},
		{"exactly the cap", strings.NewReader(body), int64(len(body)), int64(len(body)), false, nil, false},
		{"short of the cap", strings.NewReader(body), int64(len(body)) + 5, int64(len(body)), false, nil, false},
		{"past the cap", strings.NewReader(body), 1000, 1000, true, nil, false},
		{"one past the cap", strings.NewReader(body), int64(len(body)) - 1, int64(len(body)) - 1, true, nil, false},
		{"an empty body", strings.NewReader(""), 10, 0, false, nil, false},
		{"a read failure", io.MultiReader(strings.NewReader(body[:500]), iotest.ErrReader(cut)), -1, 500, false, cut, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w bytes.Buffer
			n, over, readErr, writeErr := download.Copy(&w, tc.body, tc.want)
			assert.Equal(t, tc.n, n, "bytes written")
			assert.Equal(t, tc.over, over, "over")
			assert.Equal(t, tc.readErr, readErr, "readErr")
			require.NoError(t, writeErr)
			assert.Equal(t, body[:n], w.String(), "the bytes written")
		})
	}
}

// TestCopyWriteFailures: a writer's error, or a byte count it cannot have
// written, is a failure to write, also at the cap.
func TestCopyWriteFailures(t *testing.T) {
	t.Parallel()
	full := errors.New("disk full")
	for _, tc := range []struct {
		name string
		w    io.Writer
		want int64
		n    int64
		err  error
	}{
		{"the writer fails", writerFunc(func(p []byte) (int, error) { return 3, full }), -1, 3, full},
		{"the writer fails at the cap", writerFunc(func(p []byte) (int, error) { return 2, full }), 4, 2, full},
		{"a count past the bytes", writerFunc(func(p []byte) (int, error) { return len(p) + 1, nil }), -1, 0, download.ErrInvalidWrite},
		{"a negative count", writerFunc(func(p []byte) (int, error) { return -1, nil }), 100, 0, download.ErrInvalidWrite},
		{"a count past the cap", writerFunc(func(p []byte) (int, error) { return len(p) + 1, nil }), 4, 0, download.ErrInvalidWrite},
		{"a negative count at the cap", writerFunc(func(p []byte) (int, error) { return -1, nil }), 4, 0, download.ErrInvalidWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, over, readErr, writeErr := download.Copy(tc.w, strings.NewReader("0123456789"), tc.want)
			assert.Equal(t, tc.n, n)
			assert.False(t, over)
			require.NoError(t, readErr)
			assert.ErrorIs(t, writeErr, tc.err)
		})
	}
}

// TestChecked: the bytes pass on, hashed, counted, with progress after
// each write that wrote some.
func TestChecked(t *testing.T) {
	t.Parallel()
	var w bytes.Buffer
	var progress [][2]int64
	c := &download.Checked{W: &w, Hash: sha256.New(), Total: 10, Progress: func(done, total int64) {
		progress = append(progress, [2]int64{done, total})
	}}
	for _, p := range []string{"0123", "", "456789"} {
		n, err := c.Write([]byte(p))
		require.NoError(t, err)
		assert.Equal(t, len(p), n)
	}
	sum := sha256.Sum256([]byte("0123456789"))
	assert.Equal(t, sum[:], c.Hash.Sum(nil))
	assert.Equal(t, int64(10), c.Done)
	assert.Equal(t, [][2]int64{{4, 10}, {10, 10}}, progress)
	assert.Equal(t, "0123456789", w.String())

	plain := &download.Checked{W: writerFunc(func(p []byte) (int, error) { return len(p) + 1, nil })}
	_, err := plain.Write([]byte("x"))
	require.ErrorIs(t, err, download.ErrInvalidWrite)
	assert.Zero(t, plain.Done)
	plain = &download.Checked{W: writerFunc(func(p []byte) (int, error) { return -1, nil })}
	_, err = plain.Write([]byte("x"))
	assert.ErrorIs(t, err, download.ErrInvalidWrite)
}
