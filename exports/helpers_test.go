package exports_test

// The package's test harness: export files downloaded from the fake API
// on a fixed clock, files of other schemas written with parquet-go, and
// the sequences gathered.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// testNow is the fixed time of the fakes: 14:20 UTC, so the latest
// export is 2026-06-10/13.
var testNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

// fetched is an export downloaded from a fake: its file and meta.
type fetched struct {
	path string
	data []byte
	meta *synthient.ExportMeta
}

// fetch downloads feed's export id, verified, from a fake at testNow
// whose files are about size bytes (0: the fake's default) into a
// temporary directory.
func fetch(t testing.TB, feed synthient.Feed, id string, size int64) fetched {
	t.Helper()
	opts := []synthienttest.Option{synthienttest.WithClock(func() time.Time { return testNow }), synthienttest.WithoutRateLimits()}
	if size > 0 {
		opts = append(opts, synthienttest.WithExportSize(size))
	}
	srv := synthienttest.NewServer(opts...)
	defer srv.Close()
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	path := filepath.Join(t.TempDir(), string(feed)+".parquet")
	m, err := c.DownloadExportFile(context.Background(), feed, id, path, &synthient.DownloadParams{Verify: true})
	require.NoError(t, err, "downloading %s %s", feed, id)
	data, err := os.ReadFile(path) //nolint:gosec // a fixture of this test
	require.NoError(t, err)
	return fetched{path: path, data: data, meta: m}
}

// openBytes opens a file held in memory.
func openBytes(t testing.TB, data []byte) *exports.File {
	t.Helper()
	f, err := exports.NewFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return f
}

// writeParquet writes rows as a Parquet file with parquet-go, the schema
// taken from T's parquet tags, and returns its bytes.
func writeParquet[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// collect gathers a sequence up to its first error, which it returns.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// genericRows reads data with parquet-go's own generic reader, the
// reference the typed sequences are compared with.
func genericRows[T any](t testing.TB, data []byte) []T {
	t.Helper()
	r := parquet.NewGenericReader[T](bytes.NewReader(data))
	defer func() { _ = r.Close() }()
	out := make([]T, r.NumRows())
	n, err := r.Read(out)
	if !errors.Is(err, io.EOF) {
		require.NoError(t, err)
	}
	return out[:n]
}

// forgeFooter returns data, a Parquet file, with its footer changed by
// edit.
func forgeFooter(t *testing.T, data []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footer := data[len(data)-8-footerLen : len(data)-8]
	var meta format.FileMetaData
	require.NoError(t, thrift.Unmarshal(new(thrift.CompactProtocol), footer, &meta))
	edit(&meta)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &meta)
	require.NoError(t, err)
	forged := append(bytes.Clone(data[:len(data)-8-footerLen]), footer...)
	forged = binary.LittleEndian.AppendUint32(forged, uint32(len(footer))) //nolint:gosec // a footer of a few bytes
	return append(forged, "PAR1"...)
}

// failingReaderAt is an io.ReaderAt whose every read gives n zero bytes
// (at most the buffer's) and err.
type failingReaderAt struct {
	n   int
	err error
}

func (r failingReaderAt) ReadAt(p []byte, _ int64) (int, error) {
	n := min(r.n, len(p))
	clear(p[:n])
	return n, r.err
}

// forgePage returns data, a Parquet file, with the page whose header
// starts at byte at changed by edit, which may edit the header and returns
// the page's body (its bytes after the header, changed or not); the file's
// offsets past the page, and its column chunk's size, move by the change
// in the page's length.
func forgePage(t *testing.T, data []byte, at int64, edit func(h *format.PageHeader, body []byte) []byte) []byte {
	t.Helper()
	r := new(thrift.CompactProtocol).NewReaderFromBytes(data[at:])
	var h format.PageHeader
	require.NoError(t, thrift.NewDecoder(r).Decode(&h))
	bodyAt := at + int64(r.BytesRead())
	end := bodyAt + int64(h.CompressedPageSize)
	body := edit(&h, bytes.Clone(data[bodyAt:end]))
	header, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	require.NoError(t, err)
	forged := append(append(bytes.Clone(data[:at]), header...), body...)
	forged = append(forged, data[end:]...)
	delta := int64(len(forged) - len(data))
	move := func(off *int64) {
		if *off > at {
			*off += delta
		}
	}
	return forgeFooter(t, forged, func(meta *format.FileMetaData) {
		for i := range meta.RowGroups {
			for j := range meta.RowGroups[i].Columns {
				cc := &meta.RowGroups[i].Columns[j]
				md := &cc.MetaData
				base := md.DataPageOffset
				if md.DictionaryPageOffset != 0 {
					base = md.DictionaryPageOffset
				}
				if base <= at && at < base+md.TotalCompressedSize {
					md.TotalCompressedSize += delta
				}
				for _, off := range []*int64{&md.DataPageOffset, &md.DictionaryPageOffset, &md.IndexPageOffset,
					&md.BloomFilterOffset, &cc.ColumnIndexOffset, &cc.OffsetIndexOffset, &cc.FileOffset} {
					move(off)
				}
			}
		}
	})
}

// firstPage returns the byte at which the first page of column col of
// row group rg of data starts.
func firstPage(t *testing.T, data []byte, rg, col int) int64 {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	md := f.Metadata().RowGroups[rg].Columns[col].MetaData
	if md.DictionaryPageOffset != 0 {
		return md.DictionaryPageOffset
	}
	return md.DataPageOffset
}

// allocated returns the bytes fn allocates on the heap (every goroutine's).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
