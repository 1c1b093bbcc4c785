package demo

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// Tests of wrap.go: the demo's lines broken to fit its width.

// A line that fits is kept; a longer one breaks at spaces, its following
// lines under the text of a decision, a result or a table row's value; a
// word wider than a line is cut.
func TestWrapLine(t *testing.T) {
	t.Parallel()
	words := func(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }
	for _, tt := range []struct {
		name, line string
		hang       string // what starts every line after the first
	}{
		{"a decision", "   | attempt 1/3 GET /x: " + words(20, "word"), "   |   "},
		{"a result", "   => " + words(25, "word"), "      "},
		{"a table row", "   Providers   " + words(30, "A,"), "               "},
		{"text", "   " + words(30, "word"), "     "},
		{"one long word", "   " + strings.Repeat("x", 250), "     "},
		{"a table row of a wide key", strings.Repeat("k", 60) + "  " + words(30, "word"), "  "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := wrapLine(tt.line)
			assert.Greater(t, len(got), 1, "lines")
			joined := got[0]
			for _, l := range got {
				assert.LessOrEqual(t, utf8.RuneCountInString(l), width, "%q", l)
			}
			for _, l := range got[1:] {
				assert.True(t, strings.HasPrefix(l, tt.hang), "%q does not start with %q", l, tt.hang)
				rest := strings.TrimPrefix(l, tt.hang)
				if strings.HasSuffix(joined, "x") && strings.HasPrefix(rest, "x") {
					joined += rest // a cut word
				} else {
					joined += " " + rest
				}
			}
			assert.Equal(t, strings.Join(strings.Fields(tt.line), " "), strings.Join(strings.Fields(joined), " "), "the words")
		})
	}
	assert.Equal(t, []string{"short"}, wrapLine("short"))
}
