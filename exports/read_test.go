package exports_test

// Tests of read.go: the untyped rows, how a typed sequence binds a file's
// columns (in any order, more of them, nullable, wider), and damaged
// pages; and the fuzz target over the reader.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// newerProxy is a proxies row of a newer file: its columns in another
// order, and more of them, one nested.
type newerProxy struct {
	ASN         int32   `parquet:"asn"`
	IP          string  `parquet:"ip"`
	City        string  `parquet:"city"`
	Score       float64 `parquet:"score"`
	Weight      float32 `parquet:"weight"`
	Verified    bool    `parquet:"verified"`
	Provider    string  `parquet:"provider"`
	Type        string  `parquet:"type"`
	Timestamp   int64   `parquet:"timestamp"`
	CountryCode string  `parquet:"country_code"`
	Ports       []int32 `parquet:"ports,list"`
	Cert        []byte  `parquet:"cert"`
}

var newerRows = []newerProxy{
	{ASN: 7922, IP: "203.0.113.7", City: "Chicago", Score: 0.5, Weight: 2, Verified: true, Provider: "BRIGHTDATA", Type: "RESIDENTIAL_PROXY",
		Timestamp: 1781049600, CountryCode: "US", Ports: []int32{80, 443}, Cert: []byte{1, 2}},
	{ASN: 3320, IP: "2001:db8::1", City: "Berlin", Score: 1.5, Provider: "SOAX", Type: "MOBILE_PROXY",
		Timestamp: 1781049601, CountryCode: "DE", Cert: []byte{}},
}

func TestRowsOfANewerFile(t *testing.T) {
	t.Parallel()
	f := openBytes(t, writeParquet(t, newerRows))

	// The typed rows ignore what they do not know.
	rows, err := collect(f.Proxies())
	require.NoError(t, err)
	assert.Equal(t, []exports.ProxyRow{
		{IP: "203.0.113.7", Provider: "BRIGHTDATA", Type: "RESIDENTIAL_PROXY", Timestamp: 1781049600, CountryCode: "US", ASN: 7922},
		{IP: "2001:db8::1", Provider: "SOAX", Type: "MOBILE_PROXY", Timestamp: 1781049601, CountryCode: "DE", ASN: 3320},
	}, rows)

	// The untyped rows hold every column; the nested one is not read.
	var types []string
	for _, c := range f.Columns() {
		types = append(types, c.Name+" "+c.Type)
	}
	assert.Equal(t, []string{"asn int32", "ip string", "city string", "score double", "weight float", "verified boolean",
		"provider string", "type string", "timestamp int64", "country_code string", "ports group", "cert binary"}, types)
	all, err := collect(f.Rows())
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, []any{int32(7922), "203.0.113.7", "Chicago", 0.5, float32(2), true, "BRIGHTDATA", "RESIDENTIAL_PROXY",
		int64(1781049600), "US", nil, []byte{1, 2}}, all[0].Values)
	city, ok := all[1].Get("city")
	assert.True(t, ok)
	assert.Equal(t, "Berlin", city)
	cert, _ := all[1].Get("cert")
	assert.Equal(t, []byte{}, cert, "an empty value is not a null")
	_, ok = all[1].Get("nope")
	assert.False(t, ok, "Get of a column the file lacks")
	all[0].Values[0] = "changed"
	assert.Equal(t, int32(3320), all[1].Values[0], "rows share their values")
}

// The untyped rows of a file of several batches are its typed rows, each
// row its own.
func TestRowsUntyped(t *testing.T) {
	t.Parallel()
	f := openBytes(t, fetch(t, synthient.FeedProxies, "2026-06-09", 0).data)
	typed, err := collect(f.Proxies())
	require.NoError(t, err)
	require.Greater(t, len(typed), 2*1024, "rows: fewer than three batches")
	untyped, err := collect(f.Rows())
	require.NoError(t, err)
	require.Len(t, untyped, len(typed))
	for i, r := range untyped {
		want := []any{typed[i].IP, typed[i].Provider, typed[i].Type, typed[i].Timestamp, typed[i].CountryCode, typed[i].ASN}
		if !assert.Equal(t, want, r.Values, "row %d", i) {
			return
		}
	}
}

// A row group whose footer announces more rows than its columns hold is a
// *FormatError after the rows there are.
func TestRowGroupShorterThanItsFooterSays(t *testing.T) {
	t.Parallel()
	forged := forgeFooter(t, writeParquet(t, newerRows), func(meta *format.FileMetaData) {
		meta.NumRows += 3
		meta.RowGroups[0].NumRows += 3
	})

	f := openBytes(t, forged)
	assert.Equal(t, int64(len(newerRows)+3), f.NumRows(), "rows the footer announces")
	rows, err := collect(f.Proxies())
	require.ErrorAs(t, err, new(*exports.FormatError))
	assert.Empty(t, rows, "rows of the short batch")
	_, err = collect(f.Rows())
	assert.ErrorAs(t, err, new(*exports.FormatError))
}

// proxyWithout is a proxies row without its asn column.
type proxyWithout struct {
	IP          string `parquet:"ip"`
	Provider    string `parquet:"provider"`
	Type        string `parquet:"type"`
	Timestamp   int64  `parquet:"timestamp"`
	CountryCode string `parquet:"country_code"`
}

// proxyASN is a proxies row whose asn column is of type T.
type proxyASN[T any] struct {
	IP          string `parquet:"ip"`
	Provider    string `parquet:"provider"`
	Type        string `parquet:"type"`
	Timestamp   int64  `parquet:"timestamp"`
	CountryCode string `parquet:"country_code"`
	ASN         T      `parquet:"asn"`
}

// proxyTimestamp is a proxies row whose timestamp is a TIMESTAMP in
// milliseconds, where the row reads Unix seconds.
type proxyTimestamp struct {
	IP          string    `parquet:"ip"`
	Provider    string    `parquet:"provider"`
	Type        string    `parquet:"type"`
	Timestamp   time.Time `parquet:"timestamp,timestamp(millisecond)"`
	CountryCode string    `parquet:"country_code"`
	ASN         int32     `parquet:"asn"`
}

// proxyUUID is a proxies row whose ip is a UUID, 16 bytes.
type proxyUUID struct {
	IP          [16]byte `parquet:"ip,uuid"`
	Provider    string   `parquet:"provider"`
	Type        string   `parquet:"type"`
	Timestamp   int64    `parquet:"timestamp"`
	CountryCode string   `parquet:"country_code"`
	ASN         int32    `parquet:"asn"`
}

// A missing column, or one of a type the row cannot hold, is a
// *ColumnError yielded before any row, alone.
func TestColumnErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
		want exports.ColumnError
	}{
		{"missing", writeParquet(t, []proxyWithout{{IP: "192.0.2.1"}}), exports.ColumnError{Column: "asn", Want: "int32"}},
		{"double", writeParquet(t, []proxyASN[float64]{{ASN: 1}}), exports.ColumnError{Column: "asn", Want: "int32", Got: "double"}},
		{"int64 for int32", writeParquet(t, []proxyASN[int64]{{ASN: 1}}), exports.ColumnError{Column: "asn", Want: "int32", Got: "int64"}},
		{"text for int32", writeParquet(t, []proxyASN[string]{{ASN: "AS1"}}), exports.ColumnError{Column: "asn", Want: "int32", Got: "string"}},
		{"nested", writeParquet(t, []proxyASN[[]int32]{{ASN: []int32{1}}}), exports.ColumnError{Column: "asn", Want: "int32", Got: "repeated"}},
		// Annotated columns whose values the field would read wrong.
		{"uint32", writeParquet(t, []proxyASN[uint32]{{ASN: 4_000_000_000}}), exports.ColumnError{Column: "asn", Want: "int32", Got: "uint32"}},
		{"timestamp", writeParquet(t, []proxyTimestamp{{Timestamp: time.Unix(1781049600, 0)}}),
			exports.ColumnError{Column: "timestamp", Want: "int64", Got: "timestamp"}},
		{"uuid for text", writeParquet(t, []proxyUUID{{IP: [16]byte{0xde, 0xad}}}), exports.ColumnError{Column: "ip", Want: "string", Got: "uuid"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var errs []error
			rows := 0
			for _, err := range openBytes(t, tc.data).Proxies() {
				if err != nil {
					errs = append(errs, err)
				} else {
					rows++
				}
			}
			assert.Zero(t, rows, "rows")
			require.Len(t, errs, 1, "errors")
			var ce *exports.ColumnError
			require.ErrorAs(t, errs[0], &ce)
			assert.Equal(t, tc.want, *ce)
		})
	}
}

// optionalProxy is a proxies row whose columns are all nullable, and
// whose timestamp is an int32.
type optionalProxy struct {
	IP          *string `parquet:"ip,optional"`
	Provider    *string `parquet:"provider,optional"`
	Type        *string `parquet:"type,optional"`
	Timestamp   *int32  `parquet:"timestamp,optional"`
	CountryCode *string `parquet:"country_code,optional"`
	ASN         *int32  `parquet:"asn,optional"`
}

// A null reads as the zero value (nil untyped), an int32 column as an
// int64 field.
func TestNullableAndNarrowerColumns(t *testing.T) {
	t.Parallel()
	ip, cc, ts, asn := "192.0.2.1", "FR", int32(-5), int32(16276)
	f := openBytes(t, writeParquet(t, []optionalProxy{
		{IP: &ip, Timestamp: &ts, CountryCode: &cc, ASN: &asn},
		{},
	}))
	for _, c := range f.Columns() {
		assert.True(t, c.Nullable, "%s is not nullable", c.Name)
	}
	rows, err := collect(f.Proxies())
	require.NoError(t, err)
	assert.Equal(t, []exports.ProxyRow{{IP: ip, Timestamp: -5, CountryCode: cc, ASN: asn}, {}}, rows)
	all, err := collect(f.Rows())
	require.NoError(t, err)
	assert.Equal(t, []any{ip, nil, nil, int32(-5), cc, asn}, all[0].Values)
	assert.Equal(t, []any{nil, nil, nil, nil, nil, nil}, all[1].Values)
}

// A page that cannot be decoded is a *FormatError in the sequence, after
// the rows read before it.
func TestDamagedPages(t *testing.T) {
	t.Parallel()
	data := fetch(t, synthient.FeedProxies, "2026-06-09", 2<<20).data
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	groups := pf.Metadata().RowGroups
	require.Greater(t, len(groups), 1, "row groups")
	// The page header of the ip column in the second row group.
	damaged := bytes.Clone(data)
	at := groups[1].Columns[0].MetaData.DataPageOffset
	if off := groups[1].Columns[0].MetaData.DictionaryPageOffset; off > 0 {
		at = off
	}
	copy(damaged[at:], bytes.Repeat([]byte{0xff}, 32))

	for name, seq := range map[string]func(*exports.File) error{
		"typed":   func(f *exports.File) error { return lastErr(f.Proxies()) },
		"untyped": func(f *exports.File) error { return lastErr(f.Rows()) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := openBytes(t, damaged)
			var fe *exports.FormatError
			require.ErrorAs(t, seq(f), &fe)
		})
	}
	rows, err := collect(openBytes(t, damaged).Proxies())
	require.Error(t, err)
	assert.Len(t, rows, int(groups[0].NumRows), "the rows of the first row group, before the error")
}

// lastErr runs a sequence to its end and returns its error.
func lastErr[T any](seq func(yield func(T, error) bool)) error {
	_, err := collect(seq)
	return err
}

// Breaking out of a loop stops it; each loop reads from the first row,
// and loops may run at once.
func TestLoops(t *testing.T) {
	t.Parallel()
	got := fetch(t, synthient.FeedJA4T, "2026-06-09", 0)
	f, err := exports.Open(got.path)
	require.NoError(t, err)
	defer f.Close()
	var first []exports.JA4TRow
	for r, err := range f.JA4T() {
		require.NoError(t, err)
		if first = append(first, r); len(first) == 10 {
			break
		}
	}
	want := genericRows[exports.JA4TRow](t, got.data)
	assert.Equal(t, want[:10], first, "the first rows")

	var wg sync.WaitGroup
	results := make([][]exports.JA4TRow, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = collect(f.JA4T()) })
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i], "loop %d", i)
		assert.Equal(t, want, results[i], "loop %d", i)
	}
}

// FuzzNewFile reads whatever bytes it is given as an export: opening,
// then the untyped and the typed rows. Nothing may panic, and every error
// is a *FormatError or a *ColumnError. A normal test run tries the seeds
// only: files of two schemas written by parquet-go, three of DuckDB's and
// Arrow's (LZ4_RAW and ZSTD pages, V2 pages, delta encodings), and damaged
// copies of them.
func FuzzNewFile(f *testing.F) {
	small := writeParquet(f, newerRows)
	nullable := writeParquet(f, []optionalProxy{{}, {}})
	seeds := [][]byte{small, nullable}
	for _, name := range []string{"duckdb-int32-overflow-v2-lz4.parquet", "duckdb-all-null.parquet", "arrow-tiny-groups.parquet"} {
		data, err := os.ReadFile(filepath.Join("testdata", "interop", name)) //nolint:gosec // a fixture of this test
		require.NoError(f, err)
		seeds = append(seeds, data)
	}
	for _, b := range seeds {
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-9])
		for _, at := range []int{4, 20, len(b) / 2, len(b) - 40} {
			d := bytes.Clone(b)
			d[at] ^= 0xff
			f.Add(d)
		}
	}
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := exports.NewFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			checkErr(t, err)
			return
		}
		checkErr(t, lastErr(file.Rows()))
		checkErr(t, lastErr(file.Proxies()))
	})
}

func checkErr(t *testing.T, err error) {
	if err == nil || errors.As(err, new(*exports.FormatError)) || errors.As(err, new(*exports.ColumnError)) {
		return
	}
	t.Fatalf("an error of type %T: %v", err, err)
}
