package ndjson_test

// Tests of ndjson.go: lines as the stream sends them, blank ones skipped,
// long ones put together up to the limit and refused past it.

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/ndjson"
)

// lines reads every line of r, copied, and the error that ended them.
func lines(r *ndjson.Reader) ([]string, error) {
	var out []string
	for {
		line, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(line))
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10) // past the 64 KiB buffer
	for _, tc := range []struct {
		name   string
		stream string
		max    int
		want   []string
		err    error
	}{
		{"lines", "{}\n{\"a\":1}\n", 100, []string{"{}", `{"a":1}`}, io.EOF},
		{"CRLF", "{}\r\n{}\r\n", 100, []string{"{}", "{}"}, io.EOF},
		{"a last line without an ending", "{}\n{}", 100, []string{"{}", "{}"}, io.EOF},
		{"blank lines skipped", "\n\r\n  \n{}\n \t\n{}\n\n", 100, []string{"{}", "{}"}, io.EOF},
		{"empty", "", 100, nil, io.EOF},
		{"a line of the limit", "1234567890\n", 10, []string{"1234567890"}, io.EOF},
		{"a line of the limit with CRLF", "1234567890\r\n", 10, []string{"1234567890"}, io.EOF},
		{"a last line of the limit", "1234567890", 10, []string{"1234567890"}, io.EOF},
		{"a line past the limit", "{}\n12345678901\n{}\n", 10, []string{"{}"}, ndjson.ErrTooLong},
		{"a last line past the limit", "12345678901", 10, nil, ndjson.ErrTooLong},
		{"a long line", "{}\n" + long + "\n{}\n", len(long), []string{"{}", long, "{}"}, io.EOF},
		{"a long line with CRLF", long + "\r\n", len(long), []string{long}, io.EOF},
		{"a long last line", long, len(long), []string{long}, io.EOF},
		{"a long line past the limit", long + "x\n{}\n", len(long), nil, ndjson.ErrTooLong},
		{"a long last line past the limit", long + "x", len(long), nil, ndjson.ErrTooLong},
		{"a long line far past the limit", long + long + "\n", len(long), nil, ndjson.ErrTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := lines(ndjson.NewReader(strings.NewReader(tc.stream), tc.max))
			require.Len(t, got, len(tc.want), "lines")
			for i := range got {
				if got[i] != tc.want[i] { // not assert.Equal: a line is 200 KiB
					t.Errorf("line %d: %d bytes, want %d", i, len(got[i]), len(tc.want[i]))
				}
			}
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// TestNextReadError: a failure to read ends the lines with it, after
// those read whole; Next then goes on failing.
func TestNextReadError(t *testing.T) {
	t.Parallel()
	cut := errors.New("connection reset")
	r := ndjson.NewReader(io.MultiReader(strings.NewReader("{}\n{\"partial"), iotest.ErrReader(cut)), 100)
	got, err := lines(r)
	assert.Equal(t, []string{"{}"}, got)
	require.ErrorIs(t, err, cut)
	_, err = r.Next()
	require.Error(t, err, "after a failure")
	long := strings.Repeat("y", 100<<10)
	r = ndjson.NewReader(io.MultiReader(strings.NewReader(long), iotest.ErrReader(cut)), 1<<20)
	_, err = r.Next()
	assert.ErrorIs(t, err, cut, "a failure in a long line")
}

// FuzzNext: any stream gives lines that are not blank, within the limit,
// without a line ending; then io.EOF, ErrTooLong or nothing else.
func FuzzNext(f *testing.F) {
	f.Add("{}\n\r\n{}", 4)
	f.Add("12345\n", 3)
	f.Fuzz(func(t *testing.T, stream string, max int) {
		if max < 0 || max > 1<<20 {
			return
		}
		got, err := lines(ndjson.NewReader(strings.NewReader(stream), max))
		for _, line := range got {
			require.LessOrEqual(t, len(line), max)
			require.NotEmpty(t, strings.TrimSpace(line))
			require.False(t, strings.HasSuffix(line, "\n"))
		}
		require.True(t, errors.Is(err, io.EOF) || errors.Is(err, ndjson.ErrTooLong), "%v", err)
	})
}
