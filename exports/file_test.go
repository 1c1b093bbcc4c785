package exports_test

// Tests of file.go: opening a file, from a path or a reader, and its
// columns.

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	got := fetch(t, synthient.FeedTorrents, "2026-06-09", 0)
	f, err := exports.Open(got.path)
	require.NoError(t, err)
	assert.Equal(t, got.meta.Rows, f.NumRows(), "rows")
	assert.Equal(t, 1, f.NumRowGroups(), "row groups")
	var fields []synthient.SchemaField
	for _, c := range f.Columns() {
		fields = append(fields, synthient.SchemaField{Name: c.Name, Type: c.Type})
		assert.False(t, c.Nullable, "%s is nullable", c.Name)
	}
	assert.Equal(t, got.meta.Schema.Fields, fields, "the meta's columns")
	require.NoError(t, f.Close())

	// After Close, a sequence yields a *FormatError wrapping fs.ErrClosed.
	_, err = collect(f.Torrents())
	var fe *exports.FormatError
	require.ErrorAs(t, err, &fe, "reading after Close")
	require.ErrorIs(t, err, fs.ErrClosed)
	assert.Equal(t, got.path, fe.Name, "name")
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("not a Parquet file, not even close"), 0o600))

	_, err := exports.Open(filepath.Join(dir, "missing.parquet"))
	require.ErrorIs(t, err, fs.ErrNotExist, "a missing file")
	assert.NotErrorAs(t, err, new(*exports.FormatError), "a missing file is a *FormatError: %v", err)

	_, err = exports.Open(dir)
	require.Error(t, err, "a directory")

	_, err = exports.Open(text)
	var fe *exports.FormatError
	require.ErrorAs(t, err, &fe, "a text file")
	assert.Equal(t, text, fe.Name, "name")
	assert.Contains(t, err.Error(), text, "the error names the file")
}

func TestNewFile(t *testing.T) {
	t.Parallel()
	got := fetch(t, synthient.FeedHoneypotDNS, "latest", 0)
	f := openBytes(t, got.data)
	rows, err := collect(f.HoneypotDNS())
	require.NoError(t, err)
	assert.Len(t, rows, int(got.meta.Rows))
	require.NoError(t, f.Close(), "Close of a File of NewFile")

	cols := f.Columns()
	cols[0].Name = "changed"
	assert.Equal(t, "timestamp", f.Columns()[0].Name, "Columns returns the file's own slice")

	_, err = exports.NewFile(nil, 10)
	require.Error(t, err, "a nil reader")
	_, err = exports.NewFile(bytes.NewReader(got.data), -1)
	assert.ErrorAs(t, err, new(*exports.FormatError), "a negative size")
}

// A negative size, or one too small for the opening magic, the footer's
// length and the closing magic, is a *FormatError that says which: an
// empty file is not said to be of a negative size.
func TestNewFileOfTooFewBytes(t *testing.T) {
	t.Parallel()
	file := []byte("PAR1\x00\x00\x00\x00PAR1") // 12 bytes: the magics and an empty footer
	tests := []struct {
		name string
		size int64
		want string
	}{
		{"negative", -1, "negative size -1"},
		{"empty", 0, "0 bytes are too few for a Parquet file"},
		{"one byte short", 11, "11 bytes are too few for a Parquet file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := file[:max(tc.size, 0)]
			_, err := exports.NewFile(bytes.NewReader(data), tc.size)
			var fe *exports.FormatError
			require.ErrorAs(t, err, &fe)
			assert.EqualError(t, fe.Err, tc.want)
		})
	}
}

// A read of the footer's length that fails is a *FormatError whose cause
// is the reader's error; one that comes back short with no error is an
// io.ErrUnexpectedEOF.
func TestNewFileOfAFailingReader(t *testing.T) {
	t.Parallel()
	broken := errors.New("the object store went away")
	tests := []struct {
		name string
		r    failingReaderAt
		want error
	}{
		{"the read fails", failingReaderAt{n: 0, err: broken}, broken},
		{"the read fails after some bytes", failingReaderAt{n: 5, err: broken}, broken},
		{"a short read, no error", failingReaderAt{n: 3}, io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := exports.NewFile(tc.r, 1<<10)
			var fe *exports.FormatError
			require.ErrorAs(t, err, &fe)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), "reading the footer's length")
		})
	}
}

// A file cut short anywhere, or a footer that is not one, is a
// *FormatError from NewFile, never a panic.
func TestNewFileOfDamagedFiles(t *testing.T) {
	t.Parallel()
	data := fetch(t, synthient.FeedProxies, "latest", 0).data
	footer := len(data) - 8 // the footer's length and the closing magic
	flipped := bytes.Clone(data)
	for i := footer - 200; i < footer; i++ {
		flipped[i] ^= 0xa5
	}
	tests := map[string]struct {
		data  []byte
		extra int64 // bytes the size claims beyond the data
	}{
		"empty":                  {nil, 0},
		"magic only":             {[]byte("PAR1"), 0},
		"two magics":             {[]byte("PAR1PAR1"), 0},
		"cut in the footer":      {data[:len(data)-100], 0},
		"cut in the data":        {data[:len(data)/2], 0},
		"last byte missing":      {data[:len(data)-1], 0},
		"footer scrambled":       {flipped, 0},
		"not parquet at all":     {bytes.Repeat([]byte("synthient "), 1000), 0},
		"no closing magic":       {append(bytes.Clone(data[:len(data)-4]), "PAR2"...), 0},
		"a size past the reader": {data, 100},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := exports.NewFile(bytes.NewReader(tc.data), int64(len(tc.data))+tc.extra)
			var fe *exports.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Empty(t, fe.Name, "name of a NewFile")
			assert.NotErrorIs(t, err, io.EOF, "an io.EOF that a loop would take for the end")
		})
	}
}

// A footer whose row count is not the sum of its row groups' is a
// *FormatError: NumRows would promise rows no loop yields.
func TestNewFileOfAFooterMiscounting(t *testing.T) {
	t.Parallel()
	forged := forgeFooter(t, fetch(t, synthient.FeedProxies, "latest", 0).data, func(meta *format.FileMetaData) {
		meta.NumRows += 3
	})
	_, err := exports.NewFile(bytes.NewReader(forged), int64(len(forged)))
	var fe *exports.FormatError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, fe.Error(), "rows, its row groups hold")
}

// A trailer that announces a footer longer than the file is refused before
// anything that size is allocated.
//
//nolint:paralleltest // counts the process's allocations: a parallel test would add its own
func TestNewFileOfAnOversizedFooter(t *testing.T) {
	data := []byte("PAR1 a few bytes \xf0\xff\xff\xffPAR1") // a footer of 4 GiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := exports.NewFile(bytes.NewReader(data), int64(len(data)))
	runtime.ReadMemStats(&after)
	require.ErrorAs(t, err, new(*exports.FormatError))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
}

// WithMaxPageSize sets the page limit: a page over it is a *FormatError
// that names the limit; a limit under 1 KiB, or a nil Option, is an error
// of Open and NewFile, and no *FormatError.
func TestWithMaxPageSize(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "interop", "duckdb-v1-uncompressed-plain.parquet")
	data, err := os.ReadFile(path) //nolint:gosec // a fixture of this test
	require.NoError(t, err)

	f, err := exports.Open(path, exports.WithMaxPageSize(1<<20))
	require.NoError(t, err)
	defer f.Close()
	rows, err := collect(f.Rows())
	require.NoError(t, err, "pages under the limit")
	assert.Len(t, rows, 400)

	f, err = exports.NewFile(bytes.NewReader(data), int64(len(data)), exports.WithMaxPageSize(4<<10))
	require.NoError(t, err)
	_, err = collect(f.Rows())
	var fe *exports.FormatError
	require.ErrorAs(t, err, &fe, "a page over the limit")
	assert.Contains(t, err.Error(), `column "ip" (UNCOMPRESSED)`)
	assert.Contains(t, err.Error(), "over the limit of 4096 (WithMaxPageSize)")

	for name, opt := range map[string]exports.Option{"under 1 KiB": exports.WithMaxPageSize(1023), "nil": nil} {
		_, err := exports.Open(path, opt)
		require.Error(t, err, name)
		assert.NotErrorAs(t, err, new(*exports.FormatError), "%s: %v", name, err)
		_, err = exports.NewFile(bytes.NewReader(data), int64(len(data)), opt)
		assert.Error(t, err, name)
	}
}
