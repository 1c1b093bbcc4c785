package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// ipv6Room makes room for 39 characters once an IPv6 address is there.
func ipv6Room(cell string) int {
	if strings.Contains(cell, ":") {
		return 39
	}
	return len(cell)
}

// A Stream's columns are set by its first block and do not move after: a
// later cell that is wider is cut with "…" (a Long one pushes its row),
// the last column is never padded or cut, colour marks take no width,
// and a table without rows prints nothing, not even its header.
func TestStream(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	s := render.NewStream(&b, render.Column{Header: "IP", Long: true}, render.Column{Header: "ISP", Max: 8},
		render.Column{Header: "RISK"}, render.Column{Header: "CATEGORIES"})
	require.NoError(t, s.Flush())
	assert.Empty(t, b.String(), "no rows, no header")

	s.Row("1.1.1.1", "Cloud", textsafe.Paint(textsafe.Green, "5"), "-")
	s.Row("8.8.8.8", "A very long ISP name", "82", "A, B")
	require.NoError(t, s.Flush())
	s.Row("2001:db8::1", "Tiny", "7", "a very long list of categories, never cut")
	s.Row("9.9.9.9", "Quad9 Foundation", "100", "-")
	require.NoError(t, s.Flush())
	want := "" +
		"IP       ISP       RISK  CATEGORIES\n" +
		"1.1.1.1  Cloud     5     -\n" +
		"8.8.8.8  A very …  82    A, B\n" +
		"2001:db8::1  Tiny      7     a very long list of categories, never cut\n" +
		"9.9.9.9  Quad9 F…  100   -\n"
	assert.Equal(t, want, textsafe.Unpaint(b.String()))

	// A column that snaps: an IPv6 address in the first block makes room
	// for every later one.
	b.Reset()
	s = render.NewStream(&b, render.Column{Header: "IP", Long: true, Need: ipv6Room}, render.Column{Header: "X"})
	s.Row("1.1.1.1", "a")
	s.Row("2001:db8::1", "b")
	require.NoError(t, s.Flush())
	s.Row("2001:db8:1234:5678:9abc:def0:1234:5678", "c")
	require.NoError(t, s.Flush())
	want = "" +
		"IP                                       X\n" +
		"1.1.1.1                                  a\n" +
		"2001:db8::1                              b\n" +
		"2001:db8:1234:5678:9abc:def0:1234:5678   c\n"
	assert.Equal(t, want, textsafe.Unpaint(b.String()))
	assert.NotContains(t, want, "\x1b")
}
