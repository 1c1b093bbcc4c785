package download_test

// Tests of part.go: the temporary file is new and beside its target, and
// moves to it only as asked. They write only under t.TempDir().

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/download"
)

func TestCreatePart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	f, err := download.CreatePart(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	assert.Equal(t, dir, filepath.Dir(f.Name()), "beside the target")
	assert.True(t, strings.HasPrefix(filepath.Base(f.Name()), "out.parquet.") && strings.HasSuffix(f.Name(), ".part"), "named after the target: %s", f.Name())
	fi, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, fi.Size(), "empty")
	assert.Zero(t, fi.Mode().Perm()&^0o644, "mode 0644 at most")
	g, err := download.CreatePart(path)
	require.NoError(t, err)
	defer func() { _ = g.Close() }()
	assert.NotEqual(t, f.Name(), g.Name(), "each download a file of its own")

	long := filepath.Join(dir, strings.Repeat("n", download.MaxNameLen))
	h, err := download.CreatePart(long)
	require.NoError(t, err)
	defer func() { _ = h.Close() }()
	assert.True(t, strings.HasPrefix(filepath.Base(h.Name()), ".synthient-"), "a name too long for the suffix: %s", h.Name())
	assert.LessOrEqual(t, len(filepath.Base(h.Name())), download.MaxNameLen)

	_, err = download.CreatePart(filepath.Join(dir, "missing", "out"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a directory that is not there")
}

func TestCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		existing  bool // a file is at the target
		overwrite bool
		err       error
		want      string // the target's content after
	}{
		{"a new file", false, false, nil, "new"},
		{"a file appeared", true, false, download.ErrAppeared, "old"},
		{"overwrite", true, true, nil, "new"},
		{"overwrite, nothing there", false, true, nil, "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path, part := filepath.Join(dir, "out"), filepath.Join(dir, "out.1.part")
			require.NoError(t, os.WriteFile(part, []byte("new"), 0o600))
			if tc.existing {
				require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
			}
			err := download.Commit(part, path, tc.overwrite)
			require.ErrorIs(t, err, tc.err)
			got, rerr := os.ReadFile(path) //nolint:gosec // a file of the test, under t.TempDir()
			require.NoError(t, rerr)
			assert.Equal(t, tc.want, string(got))
			_, serr := os.Stat(part)
			assert.Equal(t, tc.err == nil, os.IsNotExist(serr), "the part is gone once committed")
		})
	}
	assert.ErrorIs(t, download.ErrAppeared, fs.ErrExist)
}

func TestFileKind(t *testing.T) {
	t.Parallel()
	for mode, want := range map[fs.FileMode]string{
		fs.ModeSymlink: "a symbolic link", fs.ModeNamedPipe: "a named pipe", fs.ModeSocket: "a socket",
		fs.ModeDevice: "a device", fs.ModeDevice | fs.ModeCharDevice: "a device", fs.ModeIrregular: "something else",
	} {
		assert.Equal(t, want, download.FileKind(mode))
	}
}
