package lookup_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/root"
)

// Tests of ips.go on a terminal: the progress bar, the table and the
// messages as a terminal shows them, and colour.

// onTerminal runs args with stdout and stderr on one fake terminal and
// returns what was written to it and the lines it shows.
func onTerminal(t *testing.T, env map[string]string, input string, args ...string) (raw string, screen []string) {
	t.Helper()
	srv := clitest.NewServer(t)
	c := clitest.Against(srv, args...)
	for k, v := range env {
		c.Env[k] = v
	}
	c.Stdin, c.Terminal, c.TTYOut = strings.NewReader(input), true, true
	term := &clitest.SyncBuffer{}
	c.Setup = func(env *root.Env) { env.Stdout, env.Stderr = term, term }
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.OK, args...)
	return term.String(), clitest.Screen(term.String())
}

var barLine = regexp.MustCompile(`^looking up +\d+% \|`)

// With the bar drawing, no line the terminal shows holds both the bar and
// a row or a message; the rows of every request line up under the
// header, printed once; the bar is gone at the end, and the summary is the
// last line.
func TestBatchOnATerminal(t *testing.T) {
	t.Parallel()
	in := clitest.Addrs(600)
	input := strings.Join(in, "\n") + "\nnope\n" + strings.Join(in[:50], "\n") + "\n"
	raw, screen := onTerminal(t, nil, input, "lookup", "ips", "--batch-size", "50", "--concurrency", "2")
	require.Contains(t, raw, "looking up", "the bar was drawn")
	var rows []string
	for _, l := range screen {
		if barLine.MatchString(l) {
			assert.Fail(t, "the bar is left on the screen", "%q", l)
			continue
		}
		assert.NotContains(t, l, "looking up", "a line shares the bar")
		if !strings.HasPrefix(l, "synthient: ") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 601, "the header and a row per distinct address")
	assert.True(t, strings.HasPrefix(rows[0], "IP "), "the header first: %q", rows[0])
	col := strings.Index(rows[0], "ASN")
	for _, r := range rows[1:] {
		assert.Equal(t, "AS", r[col:col+2], "the ASN column of %q does not line up with the header's", r)
	}
	assert.Regexp(t, `^synthient: 651 addresses read: 600 looked up`, screen[len(screen)-1], "the summary last")
	assert.Equal(t, 1, strings.Count(raw, "IP  "), "one header")
	assert.Contains(t, raw, "\x1b[", "colour on a terminal")
}

// Colour: the risk scores and the summary's counts on a terminal, none
// with NO_COLOR or --no-color.
func TestBatchColor(t *testing.T) {
	t.Parallel()
	const input = "203.0.113.7\n8.8.8.8\n"
	for _, tt := range []struct {
		name  string
		env   map[string]string
		flags []string
		color bool
	}{
		{"terminal", nil, nil, true},
		{"NO_COLOR", map[string]string{"NO_COLOR": "1"}, nil, false},
		{"--no-color", nil, []string{"--no-color"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, _ := onTerminal(t, tt.env, input, append(tt.flags, "lookup", "ips", "--no-progress")...)
			if !tt.color {
				assert.NotContains(t, raw, "\x1b")
				return
			}
			assert.Contains(t, raw, "\x1b[31m82\x1b[0m", "a high risk in red")
			assert.Contains(t, raw, "\x1b[32m2 looked up\x1b[0m", "the summary's count in green")
		})
	}
}
