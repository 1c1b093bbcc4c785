package safefile_test

// Tests of safefile.go: Open on what a path may hold, Kind, and the
// lock. The named pipes and devices are in safefile_unix_test.go.

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/safefile"
)

// Open returns a regular file and its FileInfo, opened with the flag
// given (here: created, and written); a missing file is fs.ErrNotExist,
// and a directory a *NotRegularError naming it.
func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")

	_, _, err := safefile.Open(path, os.O_RDONLY, 0)
	require.ErrorIs(t, err, fs.ErrNotExist)

	f, fi, err := safefile.Open(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the FileInfo of a regular file")
	_, err = f.WriteString("abc")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	f, fi, err = safefile.Open(path, os.O_RDONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	assert.Equal(t, int64(3), fi.Size())
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))

	_, _, err = safefile.Open(dir, os.O_RDONLY, 0)
	var nr *safefile.NotRegularError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, dir, nr.Path)
	assert.Equal(t, dir+": not a regular file (a directory)", err.Error())
}

func TestKind(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode fs.FileMode
		want string
	}{
		{0o644, "a regular file"},
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeNamedPipe, "a named pipe"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeSymlink, "a symbolic link"},
		{fs.ModeIrregular, "mode ?---------"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, safefile.Kind(tt.mode))
		})
	}
}

// openTwice opens the file at path twice, as two runs would: two open
// files, each its own lock holder.
func openTwice(t *testing.T, path string) (a, b *os.File) {
	t.Helper()
	a, _, err := safefile.Open(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() }) // the test may have closed it: closing twice only errs
	b, _, err = safefile.Open(path, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() }) // as above
	return a, b
}

// TryLock fails while another open file holds the lock, and succeeds
// once it is unlocked, or closed.
func TestTryLock(t *testing.T) {
	t.Parallel()
	for _, release := range []string{"Unlock", "Close"} {
		t.Run(release, func(t *testing.T) {
			t.Parallel()
			a, b := openTwice(t, filepath.Join(t.TempDir(), "lock"))
			require.NoError(t, safefile.TryLock(a))
			require.Error(t, safefile.TryLock(b), "a second holder while the first holds it")
			if release == "Unlock" {
				require.NoError(t, safefile.Unlock(a))
			} else {
				require.NoError(t, a.Close())
			}
			require.NoError(t, safefile.TryLock(b), "once the first let it go")
		})
	}
}

// Lock waits while another holds the lock, and returns once it is
// released.
func TestLockWaits(t *testing.T) {
	t.Parallel()
	a, b := openTwice(t, filepath.Join(t.TempDir(), "lock"))
	require.NoError(t, safefile.Lock(a))
	done := make(chan error, 1)
	go func() { done <- safefile.Lock(b) }()
	select {
	case err := <-done:
		t.Fatalf("Lock returned (%v) while another held the lock", err)
	default:
	}
	require.NoError(t, safefile.Unlock(a))
	require.NoError(t, <-done)
	require.Error(t, safefile.TryLock(a), "b holds it now")
}

// The lock leaves the file's bytes free: another open file reads and
// writes them while the lock is held (on Windows, a lock holds off the
// reads and writes of the bytes it covers: it covers none of the file's).
func TestLockLeavesBytesFree(t *testing.T) {
	t.Parallel()
	a, b := openTwice(t, filepath.Join(t.TempDir(), "journal"))
	require.NoError(t, safefile.Lock(a))
	_, err := b.WriteAt([]byte("written by another"), 0)
	require.NoError(t, err)
	got := make([]byte, 7)
	_, err = a.ReadAt(got, 11)
	require.NoError(t, err)
	assert.Equal(t, "another", string(got))
	_, err = b.ReadAt(got, 11)
	require.NoError(t, err)
}

// A closed file has nothing to lock: an error, not a panic.
func TestLockOfClosedFile(t *testing.T) {
	t.Parallel()
	f, _, err := safefile.Open(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Error(t, safefile.Lock(f), "Lock of a closed file")
	require.Error(t, safefile.Unlock(f), "Unlock of a closed file")
}
