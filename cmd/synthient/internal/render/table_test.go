package render_test

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/synthienttest"
)

// A table cell's control characters, tab and newline are escaped before
// the columns are measured: a value cannot add a column or forge a line,
// and the columns stay aligned.
func TestTableRowEscapesCells(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	tb := render.NewTable(&b)
	tb.Row("Name", "Grace\tHopper")
	tb.Row("Risk score", "82\nRisk score  0")
	tb.Row("Org", "\x1b]0;pwned\x07")
	require.NoError(t, tb.Flush())
	want := "Name        Grace\\x09Hopper\n" +
		"Risk score  82\\x0aRisk score  0\n" +
		"Org         \\x1b]0;pwned\\x07\n"
	assert.Equal(t, want, b.String(), "table")
}

// readCSV parses out as CSV: the header, then the rows, each as wide as
// the header.
func readCSV(t *testing.T, out string) (header []string, rows [][]string) {
	t.Helper()
	all, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err, "stdout is not CSV:\n%s", out)
	require.NotEmpty(t, all, "no header")
	return all[0], all[1:]
}

// column returns the cells of the named column.
func column(t *testing.T, header []string, rows [][]string, name string) []string {
	t.Helper()
	i := -1
	for j, h := range header {
		if h == name {
			i = j
		}
	}
	require.GreaterOrEqual(t, i, 0, "no column %q in %q", name, header)
	cells := make([]string, len(rows))
	for j, r := range rows {
		cells[j] = r[i]
	}
	return cells
}

// --output csv prints a header and one row per result, with the values
// of the JSON output: the same fake answers both.
func TestCSVOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		stdin string
		rows  int
		cols  map[string]string // CSV column: the jq expression giving its values
	}{
		{name: "lookup ip", args: []string{"lookup", "ip", "203.0.113.7"}, rows: 1,
			cols: map[string]string{"ip": ".ip", "asn": ".network.asn", "isp": ".network.isp", "latitude": ".location.latitude",
				"risk_score": `.intelligence.risk_score // ""`, "categories": `.intelligence.categories // [] | join(";")`}},
		{name: "lookup ips", args: []string{"lookup", "ips", "1.1.1.1", "8.8.8.8", "1.1.1.1", "203.0.113.7"}, rows: 3,
			cols: map[string]string{"ip": ".ip", "country": ".location.country", "longitude": ".location.longitude"}},
		{name: "lookup ips from stdin", args: []string{"lookup", "ips", "--file", "-"}, stdin: "9.9.9.9\nnope\n8.8.4.4\n", rows: 2,
			cols: map[string]string{"ip": ".ip", "network_type": ".network.type"}},
		{name: "lookup domain", args: []string{"lookup", "domain", "example.com"}, rows: 1,
			cols: map[string]string{"domain": ".domain", "events_30d": ".stats.total_events_30d", "top_ports": `[.top_ports[].port] | join(";")`}},
		{name: "exports list", args: []string{"exports", "list", "proxies", "--limit", "5"}, rows: 5,
			cols: map[string]string{"id": ".feeds[].id", "size_bytes": ".feeds[].size_bytes", "checksum": ".feeds[].checksum",
				"created_at": ".feeds[].created_at | todate"}},
		{name: "exports list --all", args: []string{"exports", "list", "anonymizers", "--all"}, rows: -1,
			cols: map[string]string{"id": ".id", "row_count": ".row_count", "hour": `.hour // ""`}},
		{name: "exports head", args: []string{"exports", "head", "proxies", "latest", "--rows", "4"}, rows: 4,
			cols: map[string]string{"ip": ".ip", "asn": ".asn", "timestamp": ".timestamp", "country_code": ".country_code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Against(srv, append([]string{"-o", "csv"}, tt.args...)...)
			c.Stdin = strings.NewReader(tt.stdin)
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK, c.Args...)
			header, rows := readCSV(t, r.Stdout)
			if tt.rows >= 0 {
				assert.Len(t, rows, tt.rows, "rows")
			}
			for _, row := range rows {
				assert.Len(t, row, len(header), "a row as wide as the header")
			}
			for col, expr := range tt.cols {
				jc := clitest.Against(srv, append([]string{"--jq", expr}, tt.args...)...)
				jc.Stdin = strings.NewReader(tt.stdin)
				jr := jc.Run(t)
				clitest.RequireCode(t, jr, clierr.OK, jc.Args...)
				assert.Equal(t, clitest.Lines(jr.Stdout), column(t, header, rows, col), "column %s", col)
			}
		})
	}
}

// --output csv on a command that prints no rows is a usage error that
// names the commands that do; nothing is sent.
func TestCSVRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"account"},
		{"health"},
		{"stream", "proxies"},
		{"exports", "meta", "proxies", "latest"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, append([]string{"-o", "csv"}, args...)...)
			clitest.RequireCode(t, r, clierr.Usage, args...)
			assert.Equal(t, csvRefused, r.Stderr)
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
	r := clitest.Call{Args: []string{"-o", "csv", "version"}}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage, "version")
	assert.Equal(t, csvRefused, r.Stderr)
}

const csvRefused = "synthient: --output csv applies to exports head, exports list, index check, lookup, lookup domain, lookup ip, lookup ips; here use json, or --jq with @csv\n"

// A cell a spreadsheet would run as a formula starts with a ' in the CSV;
// a negative number does not.
func TestCSVFormulaCells(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 200, ContentType: "application/json",
		Body: `{"ip":"203.0.113.7","network":{"asn":64500,"isp":"=HYPERLINK(\"http://evil\")","type":"+cmd","org":"@SUM(A1)","domain":"-x"},` +
			`"location":{"country":"US","state":"\tTAB","city":"ok","timezone":"UTC","latitude":-33.5,"longitude":-0.25,"geo_hash":"x"}}`})
	r := clitest.RunSrv(t, srv, "-o", "csv", "lookup", "ip", "203.0.113.7")
	clitest.RequireCode(t, r, clierr.OK)
	header, rows := readCSV(t, r.Stdout)
	require.Len(t, rows, 1)
	for col, want := range map[string]string{
		"isp": `'=HYPERLINK("http://evil")`, "network_type": "'+cmd", "org": "'@SUM(A1)", "domain": "'-x",
		"state": "'\tTAB", "city": "ok", "latitude": "-33.5", "longitude": "-0.25",
	} {
		assert.Equal(t, []string{want}, column(t, header, rows, col), "column %s", col)
	}
}

// A CSV without a header writes its rows only, and CSVLine is the line a
// CSV writes for a row, quoted as CSV quotes and defused as CSVCell does.
func TestCSVLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	c := render.NewCSV(&b)
	require.NoError(t, c.Row("a", "b,c", "=x"))
	require.NoError(t, c.Flush())
	assert.Equal(t, "a,\"b,c\",'=x\n", b.String())
	assert.Equal(t, b.String(), string(render.CSVLine("a", "b,c", "=x")))
}
