package exports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of head.go, schema.go and source.go: exports head and exports schema, on a file and
// on a feed's export.

// The text output of exports head and schema on a feed's export matches
// its golden file.
func TestGoldenExportsRead(t *testing.T) {
	t.Parallel()
	clitest.CheckGolden(t, []clitest.GoldenCase{
		{Name: "exports_head", Args: []string{"exports", "head", "proxies", "2026-06-09", "--rows", "4"}},
		{Name: "exports_head_https", Args: []string{"exports", "head", "honeypot_https", "latest", "--rows", "3"}},
		{Name: "exports_schema", Args: []string{"exports", "schema", "honeypot_https", "latest"}},
	})
}

// downloadExport downloads feed's export id from srv to a file in a
// temporary directory.
func downloadExport(t *testing.T, srv *synthienttest.Server, feed synthient.Feed, id string) string {
	t.Helper()
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	path := filepath.Join(t.TempDir(), "export.parquet")
	_, err = c.DownloadExportFile(context.Background(), feed, id, path, nil)
	require.NoError(t, err)
	return path
}

// On a file, head prints the file's first rows: in JSON, each row whole,
// its columns in the file's order, equal to what package exports reads.
func TestExportsHeadFile(t *testing.T) {
	t.Parallel()
	path := downloadExport(t, clitest.NewServer(t), synthient.FeedHoneypotADB, "2026-06-10/02")
	f, err := exports.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var want []exports.HoneypotADBRow
	for r, err := range f.HoneypotADB() {
		require.NoError(t, err)
		if want = append(want, r); len(want) == 7 {
			break
		}
	}

	r := clitest.RunArgs(t, nil, "exports", "head", path, "--rows", "7", "-o", "json")
	clitest.RequireCode(t, r, 0)
	clitest.CheckJSONLines(t, r.Stdout)
	out := clitest.Lines(r.Stdout)
	require.Len(t, out, 7, "rows")
	for i, l := range out {
		var got exports.HoneypotADBRow // its json tags are the column names
		require.NoError(t, json.Unmarshal([]byte(l), &got))
		assert.Equal(t, want[i], got, "row %d", i)
		assert.True(t, strings.HasPrefix(l, `{"session":`) && strings.Contains(l, `,"sequential_id":`), "members out of order: %s", l)
	}

	r = clitest.RunArgs(t, nil, "exports", "head", path)
	clitest.RequireCode(t, r, 0)
	out = clitest.Lines(r.Stdout)
	require.Len(t, out, 1+10, "a header and the default 10 rows")
	assert.Equal(t, []string{"session", "sequential_id", "command", "hash"}, strings.Fields(out[0]), "header")
	assert.Equal(t, want[0].Session, strings.Fields(out[1])[0], "first cell")
	cmd := string(want[0].Command) // a binary value that is text
	assert.Contains(t, out[1], cmd[:min(len(cmd), 40)], "a binary value that is text")
	long := slices.IndexFunc(want, func(r exports.HoneypotADBRow) bool { return len(r.Command) > 80 })
	require.GreaterOrEqual(t, long, 0, "no row with a long command")
	assert.Contains(t, out[1+long], string(want[long].Command[:79])+"…", "a long value is cut")
}

// schema prints the columns, the rows and the row groups.
func TestExportsSchemaFile(t *testing.T) {
	t.Parallel()
	path := downloadExport(t, clitest.NewServer(t), synthient.FeedProxies, "latest")
	r := clitest.RunArgs(t, nil, "exports", "schema", path, "-o", "json")
	clitest.RequireCode(t, r, 0)
	var got struct {
		Columns []struct {
			Name, Type string
			Nullable   bool
		}
		Rows      int64
		RowGroups int `json:"row_groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got))
	f, err := exports.Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, f.NumRows(), got.Rows, "rows")
	assert.Equal(t, 1, got.RowGroups, "row groups")
	require.Len(t, got.Columns, 6)
	assert.Equal(t, "asn", got.Columns[5].Name)
	assert.Equal(t, "int32", got.Columns[5].Type)
}

// With FEED ID the export is downloaded, verified, to a temporary file
// that is gone afterwards, also when the download fails.
func TestExportsReadDownloads(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "exports", "schema", "anonymizers", "latest")
	clitest.RequireCode(t, r, 0)
	assert.Regexp(t, `(?m)^range_start +string +false$`, r.Stdout)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "downloads")
	entries, _ := os.ReadDir(tmp)
	assert.Empty(t, entries, "left in the temporary directory")

	// A storage answer of the right size that is not the file.
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	m, err := c.ExportMeta(context.Background(), synthient.FeedAnonymizers, "latest")
	require.NoError(t, err)
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 200, Body: strings.Repeat("x", int(m.Size)), ContentType: "application/octet-stream"})
	r = clitest.RunSrv(t, srv, "exports", "head", "anonymizers", "latest")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "checksum mismatch")
	assert.Empty(t, r.Stdout, "stdout")
	entries, _ = os.ReadDir(tmp)
	assert.Empty(t, entries, "left in the temporary directory after a failure")
}

// Mistakes are usage errors, before anything is sent: a FILE that is
// missing, a directory, a pipe or not Parquet too, named in the message.
func TestExportsReadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("no Parquet here"), 0o600))
	fifo := filepath.Join(dir, "pipe")
	clitest.MakeFIFO(t, fifo) // never opened: a pipe is refused from its mode
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"exports", "head", filepath.Join(dir, "missing.parquet")}, clierr.Usage, "no file " + filepath.Join(dir, "missing.parquet")},
		{[]string{"exports", "head", "proxies"}, clierr.Usage, "give its ID too (proxies latest)"},
		{[]string{"exports", "head", text, "--rows", "0"}, clierr.Usage, "--rows must be at least 1"},
		{[]string{"exports", "schema", "nofeed", "latest"}, clierr.Usage, `"nofeed" is not a feed: give one FILE, or a FEED (proxies, anonymizers`},
		{[]string{"exports", "schema", "proxies", "yesterday"}, clierr.Usage, "export id"},
		{[]string{"exports", "head", text}, clierr.Usage, "not a readable Parquet file: it does not end in PAR1"},
		{[]string{"exports", "schema", text}, clierr.Usage, text},
		{[]string{"exports", "head", dir}, clierr.Usage, dir + " is a directory, not an export file"},
		{[]string{"exports", "head", fifo}, clierr.Usage, fifo + " is not a regular file: a Parquet file is read from its end"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, tc.args...)
			clitest.RequireCode(t, r, tc.code, tc.args...)
			assert.Contains(t, r.Stderr, tc.msg, "stderr")
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}

// A file's column names and values reach the terminal escaped, in the
// table and in JSON.
func TestExportsReadEscapes(t *testing.T) {
	t.Parallel()
	hostile := "\x1b]52;c;aGk=\x07\x1b[2J\u009b"
	schema := parquet.NewSchema("row", parquet.Group{"name" + hostile: parquet.String(), "raw": parquet.Leaf(parquet.ByteArrayType)})
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema)
	_, err := w.WriteRows([]parquet.Row{{
		parquet.ValueOf(hostile).Level(0, 0, 0),
		parquet.ValueOf([]byte("\xff\xfe"+hostile)).Level(0, 0, 1),
	}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	path := filepath.Join(t.TempDir(), "hostile.parquet")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))

	for _, args := range [][]string{
		{"exports", "head", path},
		{"exports", "head", path, "-o", "json"},
		{"exports", "schema", path},
		{"exports", "schema", path, "-o", "json"},
	} {
		r := clitest.RunArgs(t, nil, args...)
		clitest.RequireCode(t, r, 0, args...)
		clitest.CheckTerminalSafe(t, strings.Join(args, " "), r.Stdout)
		assert.Contains(t, r.Stdout, "name", "the column is printed")
	}
	r := clitest.RunArgs(t, nil, "exports", "head", path, "-o", "json")
	var row map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &row), "the escaped JSON decodes")
	assert.Equal(t, hostile, row["name"+hostile], "the value, decoded")
}
