package lookup_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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

// barFrames returns the counts the bar shows in raw, what a terminal was
// sent, each with the table rows written before it: a frame is a part of
// raw between two erasures of the line that holds "looking up".
func barFrames(t *testing.T, raw string) (counts, rowsBefore []int64, total string) {
	t.Helper()
	frame := regexp.MustCompile(`looking up.*\((\d+)/(\d+|-)\)`)
	rows := int64(0)
	for _, part := range strings.Split(raw, "\r\x1b[K") {
		if m := frame.FindStringSubmatch(part); m != nil {
			n, err := strconv.ParseInt(m[1], 10, 64)
			require.NoError(t, err)
			counts, rowsBefore, total = append(counts, n), append(rowsBefore, rows), m[2]
			continue
		}
		for _, l := range strings.Split(part, "\n") {
			if l != "" && !strings.HasPrefix(l, "IP ") && !strings.HasPrefix(l, "synthient: ") {
				rows++
			}
		}
	}
	return counts, rowsBefore, total
}

// The bar counts an address once its outcome is on the screen: never
// ahead of the table's rows (which are written a request at a time), up
// to the exact total, which it knows for an input that can be read twice.
func TestBatchBarNeverAhead(t *testing.T) {
	t.Parallel()
	raw, _ := onTerminal(t, nil, strings.Join(clitest.Addrs(600), "\n")+"\n",
		"lookup", "ips", "--batch-size", "50", "--concurrency", "2")
	counts, rows, total := barFrames(t, raw)
	require.NotEmpty(t, counts, "the bar was drawn")
	for i, n := range counts {
		assert.LessOrEqual(t, n, rows[i], "frame %d shows %d addresses with %d rows on the screen", i, n, rows[i])
	}
	assert.Equal(t, "600", total, "the bar's total")
	assert.Equal(t, int64(600), counts[len(counts)-1], "the last frame")
}

// A bar at rest shows the exact count: while the second request is held
// in flight, the bar comes to show the 50 addresses of the first request,
// whose rows are on the screen.
func TestBatchBarExactAtRest(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	front, release := clitest.HoldLookups(t, srv, 2)
	c := clitest.Against(srv, "--base-url", front, "lookup", "ips", "--batch-size", "50", "--concurrency", "1")
	c.Stdin, c.Terminal, c.TTYOut = strings.NewReader(strings.Join(clitest.Addrs(120), "\n")+"\n"), true, true
	term := &clitest.SyncBuffer{}
	c.Setup = func(env *root.Env) { env.Stdout, env.Stderr = term, term }
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	atRest := func() bool {
		counts, rows, _ := barFrames(t, term.String())
		return len(counts) > 0 && counts[len(counts)-1] == 50 && rows[len(rows)-1] == 50
	}
	// Only a bar that never comes to rest takes a minute.
	assert.Eventually(t, atRest, time.Minute, 5*time.Millisecond, "the bar at rest; the terminal shows:\n%q", term.String())
	release()
	r := <-done
	clitest.RequireCode(t, r, clierr.OK)
}

// Addresses given as arguments are a known total: the bar counts up to
// it, never "(1/-)".
func TestBatchBarTotalOfArguments(t *testing.T) {
	t.Parallel()
	raw, _ := onTerminal(t, nil, "", "-o", "json", "lookup", "ip", "1.1.1.1", "8.8.8.8", "9.9.9.9")
	counts, _, total := barFrames(t, raw)
	require.NotEmpty(t, counts, "the bar was drawn:\n%q", raw)
	assert.Equal(t, "3", total, "the bar's total")
	assert.NotContains(t, raw, "/-)")
}

// With stdout piped (| cat) and stderr on a terminal, no bar is drawn, as
// gh does: the bar could not keep a line of its own among the lines the
// pipe's reader prints on the same screen.
func TestBatchNoBarWithStdoutPiped(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	for _, args := range [][]string{{"-o", "json", "lookup", "ip", "1.1.1.1", "8.8.8.8"}, {"lookup", "ips", "--file", "-"}} {
		c := clitest.Against(srv, args...)
		c.Stdin, c.Terminal = strings.NewReader(strings.Join(clitest.Addrs(300), "\n")), true
		r := c.Run(t)
		clitest.RequireCode(t, r, clierr.OK, args...)
		assert.NotContains(t, r.Stderr, "looking up", "a bar with stdout piped")
		assert.NotContains(t, r.Stderr, "\r", "a carriage return with stdout piped")
	}
}
