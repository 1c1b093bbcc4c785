package clitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// FailWriter fails every write with err.
type FailWriter struct{ Err error }

// ErrNoSpace is the error of a stdout that cannot be written.
var ErrNoSpace = errors.New("no space left on device")

// WriteAll writes p to a textsafe.Writer in pieces cut at the given offsets,
// flushes it, and returns what came out.
func WriteAll(t testing.TB, secrets *redact.Redactor, p []byte, cuts ...int) string {
	t.Helper()
	var out bytes.Buffer
	w := textsafe.NewWriter(&out, secrets)
	prev := 0
	for _, c := range append(cuts, len(p)) {
		c = min(max(c, prev), len(p))
		n, err := w.Write(p[prev:c])
		require.NoError(t, err, "Write")
		require.Equal(t, c-prev, n, "Write")
		prev = c
	}
	require.NoError(t, w.Flush(), "Flush")
	return out.String()
}

// CheckTerminalSafe fails the test if out holds a control character other
// than tab and newline, DEL, a C1 control or a byte that is not UTF-8.
func CheckTerminalSafe(t testing.TB, what, out string) {
	t.Helper()
	assert.True(t, utf8.ValidString(out), "%s holds bytes that are not UTF-8: %q", what, out)
	for i, r := range out {
		if r == '\t' || r == '\n' {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			assert.Fail(t, "a raw control character", "%s holds the raw control %U at byte %d: %q", what, r, i, out)
			return
		}
	}
}

// CheckJSONLines fails the test unless every line of out is valid JSON
// without a raw U+2028 or U+2029.
func CheckJSONLines(t *testing.T, out string) {
	t.Helper()
	for i, l := range Lines(out) {
		assert.True(t, json.Valid([]byte(l)), "line %d is not JSON: %q", i+1, l)
		assert.False(t, strings.ContainsAny(l, "\u2028\u2029"), "line %d holds a raw U+2028 or U+2029: %q", i+1, l)
	}
}

// DecodeJSON decodes one JSON document, numbers as json.Number (a number
// too big for a float64 is still valid JSON).
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// JSONEqual compares two decoded JSON values.
func JSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
