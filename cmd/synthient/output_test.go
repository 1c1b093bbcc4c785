package main

import (
	"strings"
	"testing"
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
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	want := "Name        Grace\\x09Hopper\n" +
		"Risk score  82\\x0aRisk score  0\n" +
		"Org         \\x1b]0;pwned\\x07\n"
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
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
		if got := shellWord(tt.in); got != tt.want {
			t.Errorf("shellWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A server's cursor is printed as one shell word in the "more:" hint, so
// that pasting the hint runs nothing else.
func TestExportsListCursorHintQuoted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := call{args: []string{"--base-url", hostileFront(t, srv), "exports", "list", "proxies", "--limit", "2"}, env: keyEnv(srv)}.run(t)
	wantCode(t, r, 0)
	ls := lines(r.stdout)
	last := ls[len(ls)-1]
	if !strings.HasPrefix(last, "more: --cursor '") || !strings.HasSuffix(last, "' (or --all)") {
		t.Errorf("hint %q: the cursor is not single-quoted", last)
	}
}
