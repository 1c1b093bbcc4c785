package exports_test

// Tests of pages.go: files of other writers read with the values their
// readers read (the fixtures of testdata/interop), and pages refused
// with a *FormatError before the memory they claim is allocated.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/exports"
)

// expected is a fixture's expected values, in the gzipped JSON file next
// to it (name.json.gz):
// what DuckDB reads from the file (scripts/fixtures/gen-duckdb.mjs).
type expected struct {
	Writer    string              `json:"writer"`
	Options   string              `json:"options"`
	RowGroups int                 `json:"row_groups"`
	Columns   []string            `json:"columns"`
	Types     []string            `json:"types"`
	Rows      [][]json.RawMessage `json:"rows"`
}

// duckdbTypes are the column types of Column.Type that DuckDB's types are.
var duckdbTypes = map[string]string{
	"VARCHAR": "string", "BLOB": "binary", "INTEGER": "int32", "BIGINT": "int64",
	"DOUBLE": "double", "FLOAT": "float", "BOOLEAN": "boolean",
}

// readExpected reads the expected values of the fixture path.
func readExpected(t *testing.T, path string) expected {
	t.Helper()
	gz, err := os.Open(strings.TrimSuffix(path, ".parquet") + ".json.gz")
	require.NoError(t, err, "the expected values of %s", path)
	defer func() { _ = gz.Close() }() // read-only
	zr, err := gzip.NewReader(gz)
	require.NoError(t, err)
	var want expected
	require.NoError(t, json.NewDecoder(zr).Decode(&want))
	require.Len(t, want.Types, len(want.Columns))
	return want
}

// value is the Go value that Row.Values holds for raw, the JSON of a value
// of a column of type typ (Column.Type).
func value(t *testing.T, typ string, raw json.RawMessage) any {
	t.Helper()
	if string(raw) == "null" {
		return nil
	}
	var err error
	var v any
	switch typ {
	case "string":
		var s string
		err, v = json.Unmarshal(raw, &s), s
	case "binary":
		var b struct{ Base64 []byte }
		err, v = json.Unmarshal(raw, &b), b.Base64
	case "boolean":
		var b bool
		err, v = json.Unmarshal(raw, &b), b
	case "int32":
		var n int64
		n, err = strconv.ParseInt(string(raw), 10, 32)
		v = int32(n)
	case "int64":
		v, err = strconv.ParseInt(string(raw), 10, 64)
	case "double":
		v, err = strconv.ParseFloat(string(raw), 64)
	case "float":
		var f float64
		f, err = strconv.ParseFloat(string(raw), 64)
		v = float32(f)
	default:
		t.Fatalf("a column of type %s in a fixture", typ)
	}
	require.NoError(t, err, "the value %s of a %s column", raw, typ)
	return v
}

// interopFiles are the fixtures: Parquet files written by DuckDB and by
// Apache Arrow (scripts/fixtures/gen.sh).
func interopFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "interop", "*.parquet"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 58, "fixtures: run scripts/fixtures/gen.sh")
	return files
}

// Every fixture reads with the values DuckDB reads from it (and Arrow's
// reader too: gen.sh checks), with the same columns, types and row
// groups; the typed rows of a file with a proxies export's columns are
// those values too.
func TestFilesOfOtherWriters(t *testing.T) {
	t.Parallel()
	for _, path := range interopFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			want := readExpected(t, path)
			f, err := exports.Open(path)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, int64(len(want.Rows)), f.NumRows(), "rows")
			assert.Equal(t, want.RowGroups, f.NumRowGroups(), "row groups")
			var names, types []string
			for i, c := range f.Columns() {
				names = append(names, c.Name)
				types = append(types, c.Type)
				assert.Equal(t, duckdbTypes[want.Types[i]], c.Type, "the type of %s (DuckDB's %s)", c.Name, want.Types[i])
			}
			require.Equal(t, want.Columns, names, "columns")

			rows, err := collect(f.Rows())
			require.NoError(t, err, "%s, %s", want.Writer, want.Options)
			require.Len(t, rows, len(want.Rows), "rows read")
			for i, r := range rows {
				wantRow := make([]any, len(types))
				for j, raw := range want.Rows[i] {
					wantRow[j] = value(t, types[j], raw)
				}
				if !assert.Equal(t, wantRow, r.Values, "row %d", i) {
					return
				}
			}
			if hasProxyColumns(names) {
				typed, err := collect(f.Proxies())
				require.NoError(t, err)
				require.Len(t, typed, len(rows))
				for i, r := range rows {
					if !assert.Equal(t, proxyOf(r), typed[i], "typed row %d", i) {
						return
					}
				}
			}
		})
	}
}

// hasProxyColumns reports a file with the columns of a proxies export.
func hasProxyColumns(names []string) bool {
	n := 0
	for _, name := range names {
		switch name {
		case "ip", "provider", "type", "timestamp", "country_code", "asn":
			n++
		}
	}
	return n == 6
}

// proxyOf is the typed row of an untyped row of a file with a proxies
// export's columns: a null is the zero value.
func proxyOf(r exports.Row) exports.ProxyRow {
	text := func(name string) string {
		v, _ := r.Get(name)
		s, _ := v.(string)
		return s
	}
	ts, _ := r.Get("timestamp")
	asn, _ := r.Get("asn")
	row := exports.ProxyRow{IP: text("ip"), Provider: text("provider"), Type: text("type"), CountryCode: text("country_code")}
	row.Timestamp, _ = ts.(int64)
	row.ASN, _ = asn.(int32)
	return row
}

// The fixtures of the cases issue 21 found read wrong, with the values
// that show it: the second row group of LZ4_RAW pages is its own, and an
// INT32 column whose deltas overflow holds its extremes.
func TestFilesOfOtherWritersIssue21(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "interop")

	f, err := exports.Open(filepath.Join(dir, "duckdb-lz4-two-groups.parquet"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := collect(f.Proxies())
	require.NoError(t, err)
	require.Len(t, rows, 4096)
	assert.Equal(t, 2, f.NumRowGroups())
	assert.Equal(t, int64(1781049600+2048*37), rows[2048].Timestamp, "the first row of the second row group")
	assert.NotEqual(t, rows[0], rows[2048])

	f, err = exports.Open(filepath.Join(dir, "duckdb-int32-overflow-v2.parquet"))
	require.NoError(t, err)
	defer f.Close()
	all, err := collect(f.Rows())
	require.NoError(t, err)
	var v32 []any
	for _, r := range all[:4] {
		v, _ := r.Get("v32")
		v32 = append(v32, v)
	}
	assert.Equal(t, []any{int32(2147483647), int32(-2147483648), int32(2147483647), int32(-2147483648)}, v32)
}

// bytesOf reads the fixture name.
func bytesOf(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "interop", name)) //nolint:gosec // a fixture of this test
	require.NoError(t, err)
	return data
}

// The files of the claims below: a dictionary of int64 values, an
// optional text column, and delta-encoded integers, in uncompressed V1
// pages, and a DuckDB file of snappy pages.
type (
	dictRow struct {
		N int64 `parquet:"n,dict"`
	}
	textRow struct {
		S *string `parquet:"s,optional"`
	}
	deltaRow struct {
		A int32 `parquet:"a,delta"`
		B int64 `parquet:"b,delta"`
	}
)

func claimFiles(t *testing.T) (dict, text, delta []byte) {
	var dicts []dictRow
	var texts []textRow
	var deltas []deltaRow
	for i := range 300 {
		s := strconv.Itoa(i)
		dicts = append(dicts, dictRow{int64(i % 10)})
		texts = append(texts, textRow{&s})
		deltas = append(deltas, deltaRow{int32(i * 3), int64(i) << 40})
	}
	none, v1 := parquet.Compression(&parquet.Uncompressed), parquet.DataPageVersion(1)
	return writeParquet(t, dicts, none, v1), writeParquet(t, texts, none, v1), writeParquet(t, deltas, none, v1)
}

// uvarintAt replaces the n-th varint (from 0) at the start of body with v.
func uvarintAt(body []byte, n int, v uint64) []byte {
	at := 0
	for range n {
		_, k := binary.Uvarint(body[at:])
		at += k
	}
	_, k := binary.Uvarint(body[at:])
	return append(binary.AppendUvarint(bytes.Clone(body[:at]), v), body[at+k:]...)
}

// What a file claims (a page's values and sizes, a dictionary's values,
// the runs and counts inside a page's data, a row group's rows) is
// checked against the bytes it has before anything is allocated for it:
// each claim below is refused with a *FormatError, and reading it
// allocates a few MiB at most, where parquet-go alone would reserve
// gigabytes (16 GiB for the dictionary of 2^31 int64 values).
//
//nolint:paralleltest // counts the process's allocations: a parallel test would add its own
func TestClaimsOfAFile(t *testing.T) {
	dict, text, delta := claimFiles(t)
	snappy := bytesOf(t, "duckdb-v1-snappy-plain.parquet")
	header := func(data []byte, edit func(*format.PageHeader)) []byte {
		return forgePage(t, data, firstPage(t, data, 0, 0), func(h *format.PageHeader, body []byte) []byte {
			edit(h)
			return body
		})
	}
	body := func(data []byte, col int, edit func([]byte) []byte) []byte {
		return forgePage(t, data, firstPage(t, data, 0, col), func(h *format.PageHeader, body []byte) []byte {
			body = edit(body)
			h.CompressedPageSize, h.UncompressedPageSize, h.CRC = int32(len(body)), int32(len(body)), 0 //nolint:gosec // a page of a few bytes
			return body
		})
	}
	tests := []struct {
		name string
		data []byte
		want string // in the error
	}{
		{"a dictionary of 2^31-1 values", header(dict, func(h *format.PageHeader) { h.DictionaryPageHeader.V.NumValues = math.MaxInt32 }),
			"a dictionary of 2147483647 values"},
		{"a dictionary of more values than bytes", header(dict, func(h *format.PageHeader) { h.DictionaryPageHeader.V.NumValues = 1000 }),
			"a dictionary of 1000 values in 80 bytes"},
		{"a data page of 2^31-1 values", header(text, func(h *format.PageHeader) { h.DataPageHeader.V.NumValues = math.MaxInt32 }),
			"2147483647 values, past the 300"},
		{"a page of 1 GiB", header(snappy, func(h *format.PageHeader) { h.UncompressedPageSize = 1 << 30 }),
			"1073741824 bytes uncompressed, over the limit of 268435456"},
		{"a page past its column chunk", header(text, func(h *format.PageHeader) { h.CompressedPageSize = math.MaxInt32 }),
			"past the end of its column chunk"},
		{"a run of 2^30 levels", body(text, 0, func(b []byte) []byte {
			// The definition levels: 4 bytes of length, then one run of
			// 2^30 ones.
			run := binary.AppendUvarint(nil, 1<<31)
			levels := binary.LittleEndian.AppendUint32(nil, uint32(len(run)+1)) //nolint:gosec // a run of a few values
			return append(append(append(levels, run...), 1), b[4+binary.LittleEndian.Uint32(b):]...)
		}), "RLE runs of more than the page's 300 values"},
		{"INT32 deltas of 2^31-1 values", body(delta, 0, func(b []byte) []byte { return uvarintAt(b, 2, math.MaxInt32) }),
			"DELTA_BINARY_PACKED data of 2147483647 values in a page of 300"},
		{"INT64 deltas of 2^31-1 values", body(delta, 1, func(b []byte) []byte { return uvarintAt(b, 2, math.MaxInt32) }),
			"DELTA_BINARY_PACKED data of 2147483647 values in a page of 300"},
		{"a row group of 2^40 rows", forgeFooter(t, text, func(meta *format.FileMetaData) {
			meta.NumRows, meta.RowGroups[0].NumRows, meta.RowGroups[0].Columns[0].MetaData.NumValues = 1<<40, 1<<40, 1<<40
		}), "the column chunk ends after 300 values, its metadata announces 1099511627776"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			bytes := allocated(func() {
				var f *exports.File
				if f, err = exports.NewFile(bytesReader(tc.data), int64(len(tc.data))); err == nil {
					_, err = collect(f.Rows())
				}
			})
			var fe *exports.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, bytes, uint64(16<<20), "bytes allocated")
		})
	}
}

// A page that decompresses to another size than its header gives is a
// *FormatError naming the column and the codec, for every codec; the
// pages of DuckDB's LZ4_RAW, whose size parquet-go's codec guesses, read
// whole (TestFilesOfOtherWriters).
func TestPagesOfAnotherSize(t *testing.T) {
	t.Parallel()
	for _, codec := range []string{"snappy", "gzip", "zstd", "lz4", "brotli", "uncompressed"} {
		t.Run(codec, func(t *testing.T) {
			t.Parallel()
			data := bytesOf(t, "duckdb-v1-"+codec+"-plain.parquet")
			forged := forgePage(t, data, firstPage(t, data, 0, 0), func(h *format.PageHeader, body []byte) []byte {
				h.UncompressedPageSize++
				return body
			})
			_, err := collect(openBytes(t, forged).Rows())
			var fe *exports.FormatError
			require.ErrorAs(t, err, &fe)
			name := map[string]string{"lz4": "LZ4_RAW"}[codec]
			if name == "" {
				name = strings.ToUpper(codec)
			}
			assert.Contains(t, err.Error(), `column "ip" (`+name+`)`)
		})
	}
}

// A column chunk of a codec this reader does not read (LZO, and the
// Hadoop framing of LZ4 that LZ4_RAW replaced) is a *FormatError naming
// the column and the codec, once the sequence reaches it.
func TestCodecsNotRead(t *testing.T) {
	t.Parallel()
	data := bytesOf(t, "duckdb-v1-snappy-plain.parquet")
	for _, codec := range []format.CompressionCodec{format.LZO, format.Lz4} {
		t.Run(codec.String(), func(t *testing.T) {
			t.Parallel()
			forged := forgeFooter(t, data, func(meta *format.FileMetaData) { meta.RowGroups[0].Columns[1].MetaData.Codec = codec })
			_, err := collect(openBytes(t, forged).Rows())
			var fe *exports.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, err.Error(), `column "provider" (`+codec.String()+`): a codec this reader does not read`)
		})
	}
}

// A footer whose list announces 2^31-1 row groups in a few bytes is a
// *FormatError from NewFile, before the list is allocated (parquet-go
// alone reserves 2^31 row groups, about 190 GB, and dies).
//
//nolint:paralleltest // counts the process's allocations: a parallel test would add its own
func TestFooterOfAListTooLong(t *testing.T) {
	footer := []byte{
		0x15, 0x02, // version: 1
		0x19, 0x1c, 0x48, 0x01, 's', 0x00, // schema: one element, named "s"
		0x16, 0x00, // num_rows: 0
		0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, // row_groups: a list of 2^31-1 structs
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // ... of which 10 are there, empty
	}
	data := append(append([]byte("PAR1"), footer...), byte(len(footer)), 0, 0, 0) //nolint:gosec // a footer of a few bytes
	data = append(data, "PAR1"...)
	var err error
	n := allocated(func() { _, err = exports.NewFile(bytesReader(data), int64(len(data))) })
	var fe *exports.FormatError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "a length of 2147483647 elements")
	assert.Less(t, n, uint64(1<<20), "bytes allocated")
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// DELTA_BINARY_PACKED pages of parquet-go, whose INT32 pages this reader
// decodes itself, read with their values.
func TestDeltaPagesOfParquetGo(t *testing.T) {
	t.Parallel()
	_, _, data := claimFiles(t)
	rows, err := collect(openBytes(t, data).Rows())
	require.NoError(t, err)
	require.Len(t, rows, 300)
	for i, r := range rows {
		require.Equal(t, []any{int32(i * 3), int64(i) << 40}, r.Values, "row %d", i)
	}
}

// Damaged copies of the fixtures (bytes changed at random, the same each
// run) read as rows or a *FormatError, each allocating a few MiB at most:
// parquet-go alone, on the same copies, dies of running out of memory.
//
//nolint:paralleltest // counts the process's allocations: a parallel test would add its own
func TestDamagedFilesOfOtherWriters(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4)) //nolint:gosec // damage that is the same each run, not a secret
	var most uint64
	for _, path := range interopFiles(t) {
		data, err := os.ReadFile(path) //nolint:gosec // a fixture of this test
		require.NoError(t, err)
		for range 10 {
			damaged := bytes.Clone(data)
			for range 1 + r.IntN(4) {
				i := r.IntN(len(damaged))
				damaged[i] = [...]byte{damaged[i] ^ 1<<r.IntN(8), byte(r.IntN(256)), 0xff}[r.IntN(3)] //nolint:gosec // IntN(256) is a byte
			}
			var err error
			n := allocated(func() {
				var f *exports.File
				if f, err = exports.NewFile(bytesReader(damaged), int64(len(damaged))); err == nil {
					_, err = collect(f.Rows())
				}
			})
			if err != nil {
				require.ErrorAs(t, err, new(*exports.FormatError), "%s, damaged", path)
			}
			most = max(most, n)
		}
	}
	assert.Less(t, most, uint64(32<<20), "bytes allocated by the worst copy")
}

// A page whose bytes do not match its header's checksum is a
// *FormatError (parquet-go writes checksums).
func TestPageChecksums(t *testing.T) {
	t.Parallel()
	_, text, _ := claimFiles(t)
	forged := forgePage(t, text, firstPage(t, text, 0, 0), func(h *format.PageHeader, body []byte) []byte {
		require.NotZero(t, h.CRC, "the page's checksum")
		body[len(body)-1] ^= 1
		return body
	})
	_, err := collect(openBytes(t, forged).Rows())
	var fe *exports.FormatError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), `column "s" (UNCOMPRESSED): the page at byte 4: its checksum does not match its bytes`)
}
