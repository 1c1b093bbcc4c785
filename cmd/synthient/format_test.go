package main

// Tests of format.go: --output csv, --jq and --template.

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

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
			srv := newServer(t)
			c := against(srv, append([]string{"-o", "csv"}, tt.args...)...)
			c.stdin = strings.NewReader(tt.stdin)
			r := c.run(t)
			requireCode(t, r, exitOK, c.args...)
			header, rows := readCSV(t, r.stdout)
			if tt.rows >= 0 {
				assert.Len(t, rows, tt.rows, "rows")
			}
			for _, row := range rows {
				assert.Len(t, row, len(header), "a row as wide as the header")
			}
			for col, expr := range tt.cols {
				jc := against(srv, append([]string{"--jq", expr}, tt.args...)...)
				jc.stdin = strings.NewReader(tt.stdin)
				jr := jc.run(t)
				requireCode(t, jr, exitOK, jc.args...)
				assert.Equal(t, lines(jr.stdout), column(t, header, rows, col), "column %s", col)
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
			srv := newServer(t)
			r := runSrv(t, srv, append([]string{"-o", "csv"}, args...)...)
			requireCode(t, r, exitUsage, args...)
			assert.Equal(t, csvRefused, r.stderr)
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
	r := call{args: []string{"-o", "csv", "version"}}.run(t)
	requireCode(t, r, exitUsage, "version")
	assert.Equal(t, csvRefused, r.stderr)
}

const csvRefused = "synthient: --output csv applies to exports head, exports list, lookup domain, lookup ip, lookup ips; here use json, or --jq with @csv\n"

// A cell a spreadsheet would run as a formula starts with a ' in the CSV;
// a negative number does not.
func TestCSVFormulaCells(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 200, ContentType: "application/json",
		Body: `{"ip":"203.0.113.7","network":{"asn":64500,"isp":"=HYPERLINK(\"http://evil\")","type":"+cmd","org":"@SUM(A1)","domain":"-x"},` +
			`"location":{"country":"US","state":"\tTAB","city":"ok","timezone":"UTC","latitude":-33.5,"longitude":-0.25,"geo_hash":"x"}}`})
	r := runSrv(t, srv, "-o", "csv", "lookup", "ip", "203.0.113.7")
	requireCode(t, r, exitOK)
	header, rows := readCSV(t, r.stdout)
	require.Len(t, rows, 1)
	for col, want := range map[string]string{
		"isp": `'=HYPERLINK("http://evil")`, "network_type": "'+cmd", "org": "'@SUM(A1)", "domain": "'-x",
		"state": "'\tTAB", "city": "ok", "latitude": "-33.5", "longitude": "-0.25",
	} {
		assert.Equal(t, []string{want}, column(t, header, rows, col), "column %s", col)
	}
}

// --jq prints what the expression makes of each result: a string raw,
// anything else as JSON, one value per line, on every command that
// prints JSON.
func TestJQ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want func(t *testing.T, out []string)
	}{
		{"string raw", []string{"--jq", ".ip", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"8.8.8.8"}, out)
		}},
		{"number", []string{"--jq", ".network.asn", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"15169"}, out)
		}},
		{"object", []string{"--jq", "{ip, asn: .network.asn}", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{`{"asn":15169,"ip":"8.8.8.8"}`}, out)
		}},
		{"per result of a batch", []string{"--jq", ".ip", "lookup", "ips", "1.1.1.1", "9.9.9.9", "1.1.1.1"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"1.1.1.1", "9.9.9.9"}, out)
		}},
		{"@csv", []string{"--jq", "[.ip, .network.asn] | @csv", "lookup", "ips", "1.1.1.1", "9.9.9.9"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{`"1.1.1.1",13335`, `"9.9.9.9",19281`}, out)
		}},
		{"many values", []string{"--jq", ".feeds[].id", "exports", "list", "proxies", "--limit", "3"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"2026-06-10/13", "2026-06-10/12", "2026-06-10/11"}, out)
		}},
		{"none", []string{"--jq", "empty", "account"}, func(t *testing.T, out []string) {
			assert.Empty(t, out)
		}},
		{"per stream event", []string{"--jq", ".ip | length > 0", "stream", "proxies", "--max-events", "3"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"true", "true", "true"}, out)
		}},
		{"with -o json", []string{"-o", "json", "--jq", ".lookup_quota.credits", "account"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{strconv.Itoa(synthienttest.DefaultCredits)}, out)
		}},
		{"halt ends the result's values", []string{"--jq", ".ip, halt, .ip", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"8.8.8.8"}, out)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			r := runSrv(t, srv, tt.args...)
			requireCode(t, r, exitOK, tt.args...)
			tt.want(t, lines(r.stdout))
		})
	}
}

// --jq does not see the environment: $ENV is empty, so an expression
// cannot print a key held there. (Not parallel: it sets a variable.)
func TestJQReadsNoEnvironment(t *testing.T) {
	t.Setenv("SYNTHIENT_JQ_PROBE", "secret")
	srv := newServer(t)
	r := runSrv(t, srv, "--jq", "$ENV.SYNTHIENT_JQ_PROBE, env.SYNTHIENT_JQ_PROBE", "health")
	requireCode(t, r, exitOK)
	assert.Equal(t, []string{"null", "null"}, lines(r.stdout))
}

// --template executes a Go template on each result, numbers as the
// server wrote them, and ends each with a newline.
func TestTemplate(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := runSrv(t, srv, "--template", `{{.ip}} AS{{.network.asn}} {{.location.latitude}} {{json .location.country}}`,
		"lookup", "ips", "1.1.1.1", "8.8.8.8")
	requireCode(t, r, exitOK)
	assert.Equal(t, "1.1.1.1 AS13335 37.7749 \"US\"\n8.8.8.8 AS15169 37.3861 \"US\"\n", r.stdout)

	// A template that ends with a newline gets no second one; one that
	// renders nothing still makes the result's line.
	r = runSrv(t, srv, "--template", `{{join "|" .intelligence.categories}}{{"\n"}}`, "lookup", "ip", "203.0.113.7")
	requireCode(t, r, exitOK)
	assert.Equal(t, "RESIDENTIAL_PROXY\n", r.stdout)
	r = runSrv(t, srv, "--template", `{{with .intelligence}}{{.risk_score}}{{end}}`, "lookup", "ips", "8.8.8.8", "203.0.113.7", "9.9.9.9")
	requireCode(t, r, exitOK)
	assert.Equal(t, []string{"", "82", ""}, strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"), "one line per result")

	// Numbers compare as numbers; json writes <, > and & as they are.
	r = runSrv(t, srv, "--template", `{{if gt .network.asn 15000}}big{{else}}small{{end}} {{if lt .location.latitude 40.0}}south{{end}} {{json "a<b>&c"}}`,
		"lookup", "ips", "1.1.1.1", "8.8.8.8")
	requireCode(t, r, exitOK)
	assert.Equal(t, "small south \"a<b>&c\"\nbig south \"a<b>&c\"\n", r.stdout)
}

// Numbers reach a template as int64 when they are integers that fit,
// float64 when they have a fraction or an exponent, else as written.
func TestTemplateNumbers(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"i":42,"neg":-7,"f":1.5,"e":2e3,"big":123456789012345678901234567890,"list":[1,2.5]}`)
	v, err := decodeDocument(doc)
	require.NoError(t, err)
	got := templateNumbers(v).(map[string]any)
	assert.Equal(t, int64(42), got["i"])
	assert.Equal(t, int64(-7), got["neg"])
	assert.Equal(t, 1.5, got["f"])
	assert.Equal(t, 2000.0, got["e"])
	assert.Equal(t, json.Number("123456789012345678901234567890"), got["big"])
	assert.Equal(t, []any{int64(1), 2.5}, got["list"])
}

// A --jq or --template that cannot run is a usage error before anything
// is sent (exit 2); one that fails on a result is exit 1, with the
// expression's error.
func TestShapeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"jq syntax", []string{"--jq", ".[", "lookup", "ip", "8.8.8.8"}, exitUsage, "synthient: --jq '.[': unexpected EOF"},
		{"jq unknown function", []string{"--jq", "nope(1)", "account"}, exitUsage, "synthient: --jq 'nope(1)': function not defined: nope/1"},
		{"template syntax", []string{"--template", "{{.ip", "lookup", "ip", "8.8.8.8"}, exitUsage, "synthient: template: --template:1: unclosed action"},
		{"both", []string{"--jq", ".", "--template", "x", "account"}, exitUsage, "synthient: --jq and --template cannot be combined: pick one"},
		{"jq with csv", []string{"-o", "csv", "--jq", ".", "lookup", "ip", "8.8.8.8"}, exitUsage, "synthient: --output csv cannot be combined with --jq or --template"},
		{"jq error", []string{"--jq", `error("boom")`, "lookup", "ip", "8.8.8.8"}, exitFailure, "synthient: --jq: error: boom"},
		{"jq type error", []string{"--jq", ".ip + 1", "lookup", "ip", "8.8.8.8"}, exitFailure, "synthient: --jq: cannot add: string"},
		{"empty jq", []string{"--jq", "", "lookup", "ip", "8.8.8.8"}, exitUsage, "synthient: --jq is empty: give an expression, or leave the flag out"},
		{"empty template", []string{"--template=", "account"}, exitUsage, "synthient: --template is empty"},
		{"template error", []string{"--template", "{{.ip.x}}", "lookup", "ip", "8.8.8.8"}, exitFailure, "synthient: --template: template: --template:1:5: executing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			r := runSrv(t, srv, tt.args...)
			requireCode(t, r, tt.code, tt.args...)
			assert.Contains(t, r.stderr, tt.want)
			assert.Len(t, lines(r.stderr), 1, "one line on stderr")
			if tt.code == exitUsage {
				assert.Empty(t, srv.Requests(), "requests sent")
			}
		})
	}
	r := call{args: []string{"--jq", ".", "demo"}}.run(t)
	requireCode(t, r, exitUsage, "demo")
	assert.Equal(t, "synthient: --jq does not apply to demo\n", r.stderr)
}

// A failure of --jq or --template on one result of many is reported with
// the result's place, and the command goes on with the next, as jq does:
// the results were charged, and the others still print. The command
// exits 1 at the end.
func TestShapeFailureGoesOn(t *testing.T) {
	t.Parallel()
	t.Run("lookup ips", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		failed, unknown, files := outFiles(t)
		c := against(srv, append([]string{"--jq", `if .ip == "8.8.8.8" then error("stop") else .ip end`,
			"lookup", "ips", "--file", "-", "--batch-size", "1", "--concurrency", "1"}, files...)...)
		c.stdin = strings.NewReader("1.1.1.1\n8.8.8.8\n9.9.9.9\n8.8.4.4\n")
		r := c.run(t)
		requireCode(t, r, exitFailure, c.args...)
		assert.Equal(t, []string{"1.1.1.1", "9.9.9.9", "8.8.4.4"}, lines(r.stdout))
		assert.Contains(t, r.stderr, "synthient: line 2: --jq: error: stop\n")
		assert.Equal(t, ipsSummary{read: 4, lookedUp: 4, credits: 4}, parseSummary(t, r.stderr), "summary")
		assert.True(t, strings.HasSuffix(r.stderr, "synthient: --jq failed on 1 document of the results printed (listed above)\n"), "stderr:\n%s", r.stderr)
		assert.Empty(t, readLines(t, failed), "--failed")
		assert.Empty(t, readLines(t, unknown), "--unknown")
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Status: 200, ContentType: "application/x-ndjson",
			Body: `{"ip":"1.1.1.1","asn":1}` + "\n" + `{"ip":"2.2.2.2","asn":0}` + "\n" + `{"ip":"3.3.3.3","asn":3}` + "\n"})
		r := runSrv(t, srv, "--template", `{{if eq .asn 0}}{{index .nope 1}}{{end}}{{.ip}}`, "stream", "proxies")
		requireCode(t, r, exitFailure)
		assert.Equal(t, []string{"1.1.1.1", "3.3.3.3"}, lines(r.stdout))
		assert.Contains(t, r.stderr, "synthient: event 2: --template: ")
		assert.True(t, strings.HasSuffix(r.stderr, "synthient: --template failed on 1 document of the events printed (listed above)\n"), "stderr:\n%s", r.stderr)
	})
}

// What --jq and --csv print of a hostile server's strings reaches the
// terminal escaped, and forges no line.
func TestShapesOfHostileServer(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--jq", ".network.isp", "lookup", "ip", "203.0.113.7"},
		{"--jq", "[.. | strings]", "lookup", "ip", "203.0.113.7"},
		{"--template", "{{.network.isp}}", "lookup", "ip", "203.0.113.7"},
		{"-o", "csv", "lookup", "ip", "203.0.113.7"},
		{"-o", "csv", "lookup", "domain", "example.com"},
		{"-o", "csv", "exports", "list", "proxies", "--limit", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := call{args: append([]string{"--base-url", hostileFront(t, srv)}, args...), env: keyEnv(srv)}
			r := c.run(t)
			requireCode(t, r, exitOK, c.args...)
			checkTerminalSafe(t, "stdout", r.stdout)
			assertNoForgedLine(t, "stdout", r.stdout)
			checkHostileVisible(t, r, args[1] == "[.. | strings]", false)
		})
	}
}

// decodeLines decodes each line of out as JSON.
func decodeLines(t *testing.T, out string) []any {
	t.Helper()
	var vs []any
	for _, l := range lines(out) {
		var v any
		require.NoError(t, json.Unmarshal([]byte(l), &v), "line %q", l)
		vs = append(vs, v)
	}
	return vs
}

// --jq . prints each result as JSON with the values of --output json.
func TestJQIdentity(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	args := []string{"lookup", "ips", "1.1.1.1", "8.8.8.8"}
	asJSON := runSrv(t, srv, append([]string{"-o", "json"}, args...)...)
	viaJQ := runSrv(t, srv, append([]string{"--jq", "."}, args...)...)
	requireCode(t, asJSON, exitOK)
	requireCode(t, viaJQ, exitOK)
	assert.Equal(t, decodeLines(t, asJSON.stdout), decodeLines(t, viaJQ.stdout))
}
