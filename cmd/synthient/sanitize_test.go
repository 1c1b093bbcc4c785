package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestAppendText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in        string
		layout, oneLine string // with and without layout
	}{
		{"plain", "Grace Hopper ü 日本", "Grace Hopper ü 日本", "Grace Hopper ü 日本"},
		{"window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"clipboard", "\x1b]52;c;BASE64\x07", `\x1b]52;c;BASE64\x07`, `\x1b]52;c;BASE64\x07`},
		{"hyperlink", "\x1b]8;;http://evil\x1b\\", `\x1b]8;;http://evil\x1b\`, `\x1b]8;;http://evil\x1b\`},
		{"CSI as C1", "\u009b2J", `\u009b2J`, `\u009b2J`},
		{"CSI as a lone byte", "\x9b2J", `\x9b2J`, `\x9b2J`},
		{"NEL", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"CR", "a\rb", `a\x0db`, `a\x0db`},
		{"NUL", "a\x00b", `a\x00b`, `a\x00b`},
		{"tab and newline", "a\tb\nc", "a\tb\nc", `a\x09b\x0ac`},
		{"truncated sequence", "a\xe2\x80", `a\xe2\x80`, `a\xe2\x80`},
		{"line separator stays", "a\u2028b", "a\u2028b", "a\u2028b"},
		{"replacement character stays", "a\ufffdb", "a\ufffdb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(appendText(nil, []byte(tt.in), true)); got != tt.layout {
				t.Errorf("appendText(%q, layout) = %q, want %q", tt.in, got, tt.layout)
			}
			if got := escapeCell(tt.in); got != tt.oneLine {
				t.Errorf("escapeCell(%q) = %q, want %q", tt.in, got, tt.oneLine)
			}
		})
	}
}

func TestAppendJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", `{"a":"b","n":[1,2.5,null,true]}`, `{"a":"b","n":[1,2.5,null,true]}`},
		{"C1 in a string", "{\"a\":\"\u009b2J\"}", `{"a":"\u009b2J"}`},
		{"lone byte in a string", "{\"a\":\"\x9b2J\"}", `{"a":"\ufffd2J"}`},
		{"DEL and separators", "[\"\x7f\u2028\u2029\"]", `["\u007f\u2028\u2029"]`},
		{"escapes kept", `["\u001b]0;x\u0007 \\ \" \n"]`, `["\u001b]0;x\u0007 \\ \" \n"]`},
		{"escaped quote does not end the string", "[\"\\\"\t\"]", `["\"\u0009"]`},
		{"white space between tokens", "{\"a\":\t1,\r\n\"b\":2}", `{"a": 1,  "b":2}`},
		{"raw ESC (invalid JSON) made visible", "[\"\x1b\"]", `["\u001b"]`},
		{"non-ASCII kept", `["ü日本"]`, `["ü日本"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(appendJSON(nil, []byte(tt.in)))
			if got != tt.want {
				t.Errorf("appendJSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid([]byte(got)) {
				t.Errorf("appendJSON(%q) = %q is no longer valid JSON", tt.in, got)
			}
		})
	}
}

// writeAll writes p to a safeWriter in pieces cut at the given offsets,
// flushes it, and returns what came out.
func writeAll(t testing.TB, secrets *redactor, p []byte, cuts ...int) string {
	t.Helper()
	var out bytes.Buffer
	w := newSafeWriter(&out, secrets)
	prev := 0
	for _, c := range append(cuts, len(p)) {
		c = min(max(c, prev), len(p))
		if n, err := w.Write(p[prev:c]); err != nil || n != c-prev {
			t.Fatalf("Write: %d, %v", n, err)
		}
		prev = c
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The safeWriter escapes a character or redacts a secret that arrives in
// pieces as it would whole.
func TestSafeWriterSplitWrites(t *testing.T) {
	t.Parallel()
	secrets := &redactor{}
	secrets.add("11111111-2222-4333-8444-555555555555")
	tests := []struct {
		name string
		in   string
		cuts []int
		want string
	}{
		{"C1 split between its bytes", "a\u009b2J\n", []int{2}, "a\\u009b2J\n"},
		{"three-byte character split", "x\u65e5\n", []int{2, 3}, "x\u65e5\n"},
		{"secret split", "key 11111111-2222-4333-8444-555555555555 end\n", []int{10, 30}, "key [redacted] end\n"},
		{"unfinished line flushed", "no newline \x1b", []int{3}, `no newline \x1b`},
		{"one write per byte", "é\x1b\n", []int{1, 2, 3}, "é\\x1b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := writeAll(t, secrets, []byte(tt.in), tt.cuts...); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A line longer than maxPending is written without its newline, cut at a
// character boundary.
func TestSafeWriterLongLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := newSafeWriter(&out, &redactor{})
	long := strings.Repeat("a", maxPending-1) + "\u009b" // the C1 control ends past maxPending
	if _, err := w.Write([]byte(long[:maxPending])); err != nil {
		t.Fatal(err)
	}
	if out.Len() != maxPending-1 {
		t.Fatalf("%d bytes written before the newline, want %d (up to the cut character)", out.Len(), maxPending-1)
	}
	if _, err := w.Write([]byte(long[maxPending:] + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != long[:maxPending-1]+`\u009b`+"\n" {
		t.Errorf("ends %q", got[len(got)-10:])
	}
}

// Lines written at once from several goroutines come out whole (run with
// -race).
func TestSafeWriterConcurrent(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	w := newSafeWriter(&out, &redactor{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				fmt.Fprintf(w, "goroutine %d line %d \x1b\n", g, i)
			}
		}()
	}
	wg.Wait()
	ls := lines(out.String())
	if len(ls) != 400 {
		t.Fatalf("%d lines, want 400", len(ls))
	}
	for _, l := range ls {
		if !strings.HasPrefix(l, "goroutine ") || !strings.HasSuffix(l, ` \x1b`) {
			t.Fatalf("mixed line %q", l)
		}
	}
}

// A failing writer's error comes back from the Write of a line, and from
// the Flush of an unfinished line, whose Write held it back.
func TestSafeWriterError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	w := newSafeWriter(failWriter{boom}, &redactor{})
	if _, err := w.Write([]byte("line\n")); !errors.Is(err, boom) {
		t.Errorf("Write: %v", err)
	}
	w = newSafeWriter(failWriter{boom}, &redactor{})
	if _, err := w.Write([]byte("unfinished")); err != nil {
		t.Errorf("Write of an unfinished line: %v", err)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Errorf("Flush: %v", err)
	}
}

type failWriter struct{ err error }

// The first write error is sticky: a writer that fails once and then
// works again gets nothing more, and every later Write and Flush returns
// the error, so that run can tell the output was lost.
func TestSafeWriterErrorSticky(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name  string
		first string // written when the writer fails
	}{
		{"a line", "line\n"},
		{"an unfinished line, flushed", "unfinished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			fw := &failOnceWriter{w: &out, err: boom}
			w := newSafeWriter(fw, &redactor{})
			w.Write([]byte(tt.first))
			w.Flush()
			if !fw.failed {
				t.Fatal("nothing was written")
			}
			if _, err := w.Write([]byte("more\n")); !errors.Is(err, boom) {
				t.Errorf("Write after the error: %v, want %v", err, boom)
			}
			if err := w.Flush(); !errors.Is(err, boom) {
				t.Errorf("Flush after the error: %v, want %v", err, boom)
			}
			if out.Len() != 0 {
				t.Errorf("written after the error: %q", out.String())
			}
		})
	}
}

// failOnceWriter fails its first write with err, then writes to w.
type failOnceWriter struct {
	w      io.Writer
	err    error
	failed bool
}

func (f *failOnceWriter) Write(p []byte) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, f.err
	}
	return f.w.Write(p)
}

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// FuzzSanitize: no control character survives appendText or appendJSON,
// valid JSON stays valid JSON with the same values, and a safeWriter
// prints the same whether a text comes in one write or two.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"", "plain", hostileText, "{\"a\":\"\x9b\u009b\u2028\x7f\",\t\"b\":[1,\"\\\"\"]}",
		"a\xe2\x80", `["\u001b\\"]`, "\x1b[2J\r\n",
	} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		checkTerminalSafe(t, "appendText", string(appendText(nil, in, true)))
		if one := escapeCell(string(in)); strings.ContainsAny(one, "\t\n") {
			t.Errorf("escapeCell(%q) = %q keeps a tab or newline", in, one)
		}
		checkJSONEscaped(t, in, appendJSON(nil, in))
		whole := writeAll(t, &redactor{}, in)
		if split := writeAll(t, &redactor{}, in, int(cut)); split != whole {
			t.Errorf("written in two at %d: %q, in one: %q", cut, split, whole)
		}
		checkTerminalSafe(t, "safeWriter", whole)
	})
}

// checkJSONEscaped checks appendJSON's output out for the input in.
func checkJSONEscaped(t *testing.T, in, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("appendJSON(%q) = %q is not UTF-8", in, out)
	}
	for _, r := range string(out) {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
			t.Fatalf("appendJSON(%q) = %q holds %U", in, out, r)
		}
	}
	if !json.Valid(in) {
		return
	}
	if !json.Valid(out) {
		t.Fatalf("appendJSON(%q) = %q is no longer valid JSON", in, out)
	}
	want, err := decodeJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeJSON(out)
	if err != nil {
		t.Fatalf("appendJSON(%q) = %q is not JSON: %v", in, out, err)
	}
	if !jsonEqual(want, got) {
		t.Errorf("appendJSON(%q) = %q decodes to %v, want %v", in, out, got, want)
	}
}
