package main

// Tests of main.go: a bulk run with a journal, stopped part way (killed
// with SIGKILL at many points, or by a fault) and resumed, charges no
// address twice, accounts for every address once, and prints one CSV
// header.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/synthienttest"
)

// killInput is the input of the kill test: 150 addresses, every tenth
// repeating an earlier one, and two lines that are not addresses.
func killInput() (text string, distinct []string, words int) {
	addrs := clitest.Addrs(150)
	var b strings.Builder
	for i, a := range addrs {
		b.WriteString(a + "\n")
		words++
		if i%10 == 9 {
			b.WriteString(addrs[i/2] + "\n")
			words++
		}
	}
	b.WriteString("not-an-address\n# a comment\nbogus\n")
	return b.String(), addrs, words + 2
}

// killRun is one run of lookup ips with the journal in dir, appending its
// stdout to dir/out.ndjson, or dir/out.csv for format csv; it is killed
// with SIGKILL after the fake saw killAt batch requests since the run
// started, and then a pause of up to jitter, or runs to its end when
// killAt is 0. It returns the exit code (-1 when killed) and stderr.
func killRun(t *testing.T, srv *synthienttest.Server, dir, format string, killAt int, jitter time.Duration) (int, string) {
	t.Helper()
	name := map[string]string{"json": "out.ndjson", "csv": "out.csv"}[format]
	out, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	defer out.Close() //nolint:errcheck // the child's stdout: this process writes nothing to it
	cmd := process(t, srv, "-o", format, "lookup", "ips", "--file", filepath.Join(dir, "in.txt"),
		"--journal", filepath.Join(dir, "run.journal"), "--unknown", filepath.Join(dir, "unknown.txt"),
		"--batch-size", "7", "--concurrency", "2")
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	start := srv.Arrivals(synthienttest.RouteLookupIPs)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if killAt > 0 {
		// Wait for the killAt-th request, unless the run ends first (a
		// resumed run with fewer requests left than killAt).
		deadline := time.Now().Add(20 * time.Second)
		ended := false
		for !ended && srv.Arrivals(synthienttest.RouteLookupIPs)-start < killAt && time.Now().Before(deadline) {
			select {
			case err = <-done:
				ended = true
			case <-time.After(50 * time.Microsecond):
			}
		}
		if !ended {
			time.Sleep(time.Duration(rand.Int64N(int64(jitter) + 1))) //nolint:gosec // when to kill, not a secret
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err = <-done
		}
	} else {
		err = <-done
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stderr.String()
}

// printed returns the addresses of the NDJSON results in dir/out.ndjson,
// and how many of its lines are not whole JSON: a kill cuts a write short
// (between two pages of it), and the run that resumes starts a new line.
func printed(t *testing.T, dir string) (ips []string, torn int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "out.ndjson")) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct {
			IP string `json:"ip"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			torn++
			continue
		}
		ips = append(ips, v.IP)
	}
	require.NoError(t, sc.Err())
	return ips, torn
}

// A run killed with SIGKILL at many points (after its nth request reached
// the API, then a random pause), resumed and killed again, then resumed to
// its end: the fake charged no address twice; every address of the input
// was printed once or is in --unknown, none lost; everything charged was
// printed or is in --unknown; an address is in both only when a kill fell
// between writing its result and recording it (at most one per kill); and
// the last run's summary counts every address of the input once.
func TestJournalSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	input, distinct, words := killInput()
	trials := []struct{ first, second int }{
		{1, 1}, {1, 3}, {2, 2}, {3, 1}, {4, 5}, {5, 2}, {6, 6}, {8, 3}, {10, 1}, {12, 4}, {15, 2}, {18, 2}, {20, 1},
	}
	for i, tr := range trials {
		t.Run(fmt.Sprintf("%d:%d,%d", i, tr.first, tr.second), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t, synthienttest.WithoutRateLimits())
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "in.txt"), []byte(input), 0o600))
			kills := 0
			for _, at := range []int{tr.first, tr.second} {
				if code, stderr := killRun(t, srv, dir, "json", at, 3*time.Millisecond); code == -1 {
					kills++
				} else {
					t.Logf("run killed after request %d ended first (exit %d): %s", at, code, stderr)
				}
			}
			code, stderr := killRun(t, srv, dir, "json", 0, 0)
			require.Contains(t, []int{0, 3}, code, "the last run's exit code; stderr:\n%s", stderr)

			charged := map[netip.Addr]int{}
			for _, ip := range srv.ChargedIPs() {
				charged[ip]++
				assert.Equal(t, 1, charged[ip], "%s was charged twice", ip)
			}
			shown := map[string]int{}
			lines, torn := printed(t, dir)
			assert.LessOrEqual(t, torn, kills, "lines of the output cut short")
			for _, ip := range lines {
				shown[ip]++
				assert.Equal(t, 1, shown[ip], "%s was printed twice", ip)
				assert.Equal(t, 1, charged[netip.MustParseAddr(ip)], "%s was printed and not charged", ip)
			}
			unknown := map[string]bool{}
			for _, ip := range clitest.FileLines(t, filepath.Join(dir, "unknown.txt")) {
				unknown[ip] = true
			}
			both := 0
			for _, ip := range distinct {
				switch {
				case shown[ip] > 0 && unknown[ip]:
					both++
				case shown[ip] == 0 && !unknown[ip]:
					assert.Fail(t, "an address was lost", "%s was neither printed nor in --unknown", ip)
				}
			}
			t.Logf("%d kills; %d addresses printed, %d lines cut short, %d in --unknown, %d both", kills, len(shown), torn, len(unknown), both)
			assert.LessOrEqual(t, both, kills, "addresses both printed and in --unknown")
			for ip := range charged {
				assert.True(t, shown[ip.String()] > 0 || unknown[ip.String()], "%s was charged, and neither printed nor in --unknown", ip)
			}
			s := clitest.ParseSummary(t, stderr)
			assert.Equal(t, int64(words), s.Read, "the last run read every address")
			assert.Equal(t, int64(len(distinct)), s.LookedUp+s.Earlier+s.Unknown, "every distinct address once, in the last run's summary")
			assert.Equal(t, int64(len(unknown)), s.Unknown, "the summary's unknown and --unknown")
			assert.Equal(t, int64(2), s.Invalid)
			assert.Zero(t, s.NotSent+s.Rejected)
		})
	}
}

// csvRows reads the CSV file path, whose rows may have fewer cells than
// the header (a row a kill cut short, ended by the next run).
func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	return rows
}

// headers counts the rows of rows that are the CSV header of lookups.
func headers(rows [][]string) int {
	n := 0
	for _, row := range rows {
		if slices.Equal(row, render.IPCSVHeader) {
			n++
		}
	}
	return n
}

// A CSV run with a journal killed with SIGKILL at a few points and
// resumed, appending to one file (>>), leaves one header, at its top,
// and no address twice.
func TestJournalCSVHeaderSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	input, _, _ := killInput()
	for _, at := range []int{1, 3, 6} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t, synthienttest.WithoutRateLimits())
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "in.txt"), []byte(input), 0o600))
			killRun(t, srv, dir, "csv", at, 3*time.Millisecond)
			killRun(t, srv, dir, "csv", at, 3*time.Millisecond)
			code, stderr := killRun(t, srv, dir, "csv", 0, 0)
			require.Contains(t, []int{0, 3}, code, "the last run's exit code; stderr:\n%s", stderr)
			rows := csvRows(t, filepath.Join(dir, "out.csv"))
			require.NotEmpty(t, rows)
			assert.Equal(t, render.IPCSVHeader, rows[0], "the first row")
			assert.Equal(t, 1, headers(rows), "headers")
			seen := map[string]bool{}
			for _, row := range rows[1:] {
				if len(row) == len(render.IPCSVHeader) && !slices.Equal(row, render.IPCSVHeader) {
					assert.False(t, seen[row[0]], "%s printed twice", row[0])
					seen[row[0]] = true
				}
			}
		})
	}
}

// The README's recipe of a resumable CSV run, as written (lookup ips
// --file addresses.txt -o csv --journal run.journal ... >> results.csv):
// a run stopped part way by a 402, resumed and stopped again, then
// resumed to its end, leaves one header at the top of results.csv and
// every address once; a run with nothing left writes nothing.
func TestReadmeJournalRecipe(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var line string
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "synthient lookup ips --file addresses.txt -o csv --journal ") {
			line, _, _ = strings.Cut(l, "#")
		}
	}
	require.Contains(t, line, ">> results.csv", "the README's recipe")
	addrs := clitest.Addrs(4500) // 5 requests of 1000, 4 in flight
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "addresses.txt"), []byte(strings.Join(addrs, "\n")+"\n"), 0o600))
	srv := clitest.NewServer(t, synthienttest.WithoutRateLimits())
	results := filepath.Join(dir, "results.csv")
	for run, want := range []int{clierr.API, clierr.API, clierr.OK, clierr.OK} {
		if run < 2 { // the second request of the run is refused: nothing more is sent
			srv.Inject(synthienttest.RouteLookupIPs, 1, clitest.PassThrough)
			srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 402})
		}
		before, _ := os.ReadFile(results) //nolint:gosec // a file of the test's temporary directory; none before the first run
		out, err := recipe(t, srv, line, dir).CombinedOutput()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		require.Equal(t, want, code, "run %d: %s", run+1, out)
		after, err := os.ReadFile(results) //nolint:gosec // a file of the test's temporary directory
		require.NoError(t, err)
		if run == 3 {
			assert.True(t, bytes.Equal(before, after), "run 4, with nothing left, writes nothing: %d bytes, then %d", len(before), len(after))
		}
	}
	rows := csvRows(t, results)
	require.NotEmpty(t, rows)
	assert.Equal(t, render.IPCSVHeader, rows[0], "the first row")
	assert.Equal(t, 1, headers(rows), "headers")
	times := map[string]int{}
	for _, row := range rows[1:] {
		times[row[0]]++
	}
	for _, ip := range addrs {
		if !assert.Equal(t, 1, times[ip], "the rows of %s", ip) {
			break
		}
	}
	assert.Len(t, rows, len(addrs)+1, "rows")
	clitest.AssertChargedOnce(t, srv)
}
