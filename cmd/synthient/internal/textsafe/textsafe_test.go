package textsafe_test

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// Tests of textsafe.go: the escapes of text and JSON, and the Writer.

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
			assert.Equal(t, tt.layout, string(textsafe.AppendText(nil, []byte(tt.in), true)), "textsafe.AppendText(%q, layout)", tt.in)
			assert.Equal(t, tt.oneLine, textsafe.EscapeCell(tt.in), "textsafe.EscapeCell(%q)", tt.in)
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
			got := string(textsafe.AppendJSON(nil, []byte(tt.in)))
			assert.Equal(t, tt.want, got, "textsafe.AppendJSON(%q)", tt.in)
			if json.Valid([]byte(tt.in)) {
				assert.True(t, json.Valid([]byte(got)), "textsafe.AppendJSON(%q) = %q is no longer valid JSON", tt.in, got)
			}
		})
	}
}

// The safeWriter escapes a character or redacts a secret that arrives in
// pieces as it would whole.
func TestSafeWriterSplitWrites(t *testing.T) {
	t.Parallel()
	secrets := &redact.Redactor{}
	secrets.Add("11111111-2222-4333-8444-555555555555")
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
			assert.Equal(t, tt.want, clitest.WriteAll(t, secrets, []byte(tt.in), tt.cuts...))
		})
	}
}

// A line longer than textsafe.MaxPending is written without its newline, cut at a
// character boundary.
func TestSafeWriterLongLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := textsafe.NewWriter(&out, &redact.Redactor{})
	long := strings.Repeat("a", textsafe.MaxPending-1) + "\u009b" // the C1 control ends past textsafe.MaxPending
	_, err := w.Write([]byte(long[:textsafe.MaxPending]))
	require.NoError(t, err)
	require.Equal(t, textsafe.MaxPending-1, out.Len(), "bytes written before the newline: want those up to the cut character")
	_, err = w.Write([]byte(long[textsafe.MaxPending:] + "\n"))
	require.NoError(t, err)
	got := out.String()
	// Not Equal: it would print two texts of MaxPending bytes; this shows
	// the end, where they differ.
	assert.True(t, got == long[:textsafe.MaxPending-1]+`\u009b`+"\n", "ends %q", got[max(0, len(got)-10):]) //nolint:testifylint // see above
}

// Lines written at once from several goroutines come out whole (run with
// -race).
func TestSafeWriterConcurrent(t *testing.T) {
	t.Parallel()
	var out clitest.SyncBuffer
	w := textsafe.NewWriter(&out, &redact.Redactor{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if _, err := fmt.Fprintf(w, "goroutine %d line %d \x1b\n", g, i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	ls := clitest.Lines(out.String())
	require.Len(t, ls, 400, "lines")
	for _, l := range ls {
		require.True(t, strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(l, ` \x1b`), "mixed line %q", l)
	}
}

// A failing writer's error comes back from the Write of a line, and from
// the Flush of an unfinished line, whose Write held it back.
func TestSafeWriterError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	w := textsafe.NewWriter(clitest.FailWriter{Err: boom}, &redact.Redactor{})
	_, err := w.Write([]byte("line\n"))
	require.ErrorIs(t, err, boom, "Write")
	w = textsafe.NewWriter(clitest.FailWriter{Err: boom}, &redact.Redactor{})
	_, err = w.Write([]byte("unfinished"))
	require.NoError(t, err, "Write of an unfinished line")
	assert.ErrorIs(t, w.Flush(), boom, "Flush")
}

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
			w := textsafe.NewWriter(fw, &redact.Redactor{})
			_, _ = w.Write([]byte(tt.first)) // fails for a line; an unfinished one fails in Flush
			require.ErrorIs(t, w.Flush(), boom, "Flush of what failed")
			require.True(t, fw.failed, "nothing was written")
			_, err := w.Write([]byte("more\n"))
			require.ErrorIs(t, err, boom, "Write after the error")
			require.ErrorIs(t, w.Flush(), boom, "Flush after the error")
			assert.Empty(t, out.String(), "written after the error")
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

// FuzzSanitize: no control character survives appendText or appendJSON,
// valid JSON stays valid JSON with the same values, and a safeWriter
// prints the same whether a text comes in one write or two.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"", "plain", clitest.HostileText, "{\"a\":\"\x9b\u009b\u2028\x7f\",\t\"b\":[1,\"\\\"\"]}",
		"a\xe2\x80", `["\u001b\\"]`, "\x1b[2J\r\n",
	} {
		f.Add([]byte(s), uint16(len(s)/2)) //nolint:gosec // a seed of a few dozen bytes
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		clitest.CheckTerminalSafe(t, "appendText", string(textsafe.AppendText(nil, in, true)))
		one := textsafe.EscapeCell(string(in))
		assert.False(t, strings.ContainsAny(one, "\t\n"), "textsafe.EscapeCell(%q) = %q keeps a tab or newline", in, one)
		checkJSONEscaped(t, in, textsafe.AppendJSON(nil, in))
		whole := clitest.WriteAll(t, &redact.Redactor{}, in)
		assert.Equal(t, whole, clitest.WriteAll(t, &redact.Redactor{}, in, int(cut)), "written in two at %d, and in one", cut)
		clitest.CheckTerminalSafe(t, "safeWriter", whole)
	})
}

// checkJSONEscaped checks appendJSON's output out for the input in.
func checkJSONEscaped(t *testing.T, in, out []byte) {
	t.Helper()
	require.True(t, utf8.Valid(out), "textsafe.AppendJSON(%q) = %q is not UTF-8", in, out)
	for _, r := range string(out) {
		bad := r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029'
		require.False(t, bad, "textsafe.AppendJSON(%q) = %q holds %U", in, out, r)
	}
	if !json.Valid(in) {
		return
	}
	require.True(t, json.Valid(out), "textsafe.AppendJSON(%q) = %q is no longer valid JSON", in, out)
	want, err := clitest.DecodeJSON(in)
	require.NoError(t, err)
	got, err := clitest.DecodeJSON(out)
	require.NoError(t, err, "textsafe.AppendJSON(%q) = %q is not JSON", in, out)
	assert.True(t, clitest.JSONEqual(want, got), "textsafe.AppendJSON(%q) = %q decodes to %v, want %v", in, out, got, want)
}

// FuzzRedactJSON: redacting keeps valid JSON valid, also where a secret
// begins inside an escape sequence, in either case, whether the line is
// redacted alone or as the safeWriter prints a stream line. The secret is
// a piece of the input made of what a key is made of (letters, digits,
// '-', '_' and, for good measure, '\'); one that could be part of a
// number is left out (a key of digits alone would cut a number in two).
func FuzzRedactJSON(f *testing.F) {
	for _, s := range []struct {
		in       string
		start, n uint16
	}{
		{`{"k":"\u123e4567-e89b-12d3-a456-426614174000"}`, 8, 36},
		{`{"k":"\u00e9abcdefgh"}`, 9, 9},
		{`{"k":"\u00e9abcdefgh"}`, 7, 10},
		{`["\\\nsecret_key_1\\"]`, 5, 13},
		{`["\b\f\n\r\t\"\/\\ key-000000000000x"]`, 18, 20},
		{`{"a":[1,2.5e-7,{"b":"Sk_Live_ABCDEFGH"}],"c":null}`, 22, 16},
	} {
		f.Add([]byte(s.in), s.start, s.n, false)
		f.Add([]byte(s.in), s.start, s.n, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, start, n uint16, upper bool) {
		if !json.Valid(in) {
			return
		}
		lo := min(int(start), len(in))
		secret := string(in[lo:min(lo+int(n), len(in))])
		if len(secret) < redact.MinSecretLen || strings.Trim(secret, "0123456789eE-") == "" ||
			strings.Trim(secret, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\\") != "" {
			return
		}
		if upper {
			secret = strings.ToUpper(secret)
		}
		r := &redact.Redactor{}
		r.Add(secret)
		out := r.Redact(in)
		require.True(t, json.Valid(out), "redact(%q) with the secret %q = %q: no longer JSON", in, secret, out)
		line := clitest.WriteAll(t, r, textsafe.AppendJSON(nil, in))
		require.True(t, json.Valid([]byte(line)), "the stream line %q with the secret %q is printed as %q: no longer JSON", in, secret, line)
	})
}
