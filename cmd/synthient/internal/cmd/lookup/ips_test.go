package lookup_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// A batch's text output is one table in input order, and the summary
// on stderr.
func TestGoldenLookupIPsTable(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	in := strings.Join([]string{
		"# a few addresses",
		"203.0.113.7",
		"",
		"8.8.8.8",
		"  1.1.1.1  ",
		"10.0.0.1",
		"2606:4700:4700::1111",
		"192.0.2.1",
		"45.155.205.233",
		"2001:db8::1",
	}, "\n") + "\n"
	args := []string{"--base-url", srv.URL, "lookup", "ips", "--file", "-"}
	r := clitest.Call{Args: args, Env: clitest.KeyEnv(srv), Stdin: strings.NewReader(in)}.Run(t)
	clitest.RequireCode(t, r, 0, args...)
	assert.Equal(t, []string{"synthient: 8 addresses read: 8 looked up, 0 invalid, 0 not sent, 0 rejected, 0 unknown (possibly charged), " +
		"0 duplicates not sent again; credits: 8 spent, 0 possibly spent"}, clitest.Lines(r.Stderr), "stderr")
	clitest.Golden(t, "lookup_ips_table", r.Stdout)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// The report of a failed request, text output, against its golden file:
// an invalid line with its number, one line for the request's addresses
// (possibly charged, never "not looked up"), the summary and the error.
func TestGoldenBatchFailureReport(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	failed, unknown, files := clitest.OutFiles(t)
	c := clitest.Against(srv, append([]string{"lookup", "ips", "--file", "-"}, files...)...)
	c.Stdin = strings.NewReader("203.0.113.7\n8.8.8.8\nnot-an-ip\n2606:4700:4700::1111\n")
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.API)
	out := strings.ReplaceAll(r.Stdout+"--- stderr\n"+clitest.Normalise(r.Stderr), filepath.Dir(failed), "DIR")
	clitest.Golden(t, "lookup_ips_failed", "exit code "+strconv.Itoa(r.Code)+"\n--- stdout\n"+out)
	assert.Empty(t, clitest.ReadLines(t, failed), "--failed: nothing is safe to send again")
	assert.Equal(t, []string{"203.0.113.7", "8.8.8.8", "2606:4700:4700::1111"}, clitest.ReadLines(t, unknown), "--unknown")
	assert.NotContains(t, r.Stderr, "203.0.113.7", "stderr lists the addresses: they are in the file")
}

// lookup ips --output json is NDJSON, one result per distinct address, in
// input order: a repeated address is printed at its first occurrence
// only, unless --keep-duplicates, which prints (and sends) every one.
func TestJSONLookupIPsInputOrder(t *testing.T) {
	t.Parallel()
	in := []string{"8.8.8.8", "203.0.113.7", "2606:4700:4700::1111", "10.0.0.1", "8.8.8.8", "1.1.1.1", "192.0.2.1"}
	tests := []struct {
		name  string
		flags []string
		want  []string
		dups  int64
	}{
		{"distinct", nil, slices.Delete(slices.Clone(in), 4, 5), 1},
		{"keep duplicates", []string{"--keep-duplicates"}, in, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.BatchCall(srv, strings.Join(in, "\n"), tt.flags...).Run(t)
			clitest.RequireCode(t, r, 0)
			assert.Equal(t, tt.want, clitest.NDJSONIPs(t, r.Stdout), "results in input order")
			assert.Equal(t, tt.dups, clitest.ParseSummary(t, r.Stderr).Duplicates, "duplicates")
			if tt.flags == nil {
				clitest.Golden(t, "lookup_ips.ndjson", r.Stdout)
			}
		})
	}
}

// 2,500 addresses on stdin with --concurrency 3: three requests (1000,
// 1000, 500) and NDJSON in exactly input order; the credits the summary
// gives are those the fake charged.
func TestBatch2500FromStdin(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	in := clitest.Addrs(2500)
	r := clitest.BatchCall(srv, strings.Join(in, "\n")+"\n", "--concurrency", "3").Run(t)
	clitest.RequireCode(t, r, 0)
	clitest.AssertAddrs(t, in, clitest.NDJSONIPs(t, r.Stdout), "results")
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
	// 1000 + 1000 + 500 addresses: ceil(0.9 n) credits each.
	spent := synthienttest.DefaultCredits - srv.Credits(srv.APIKey)
	assert.Equal(t, int64(900+900+450), spent, "credits spent (chunks of 1000, 1000 and 500)")
	s := clitest.ParseSummary(t, r.Stderr)
	assert.Equal(t, clitest.Summary{Read: 2500, LookedUp: 2500, Credits: spent}, s, "summary")
}

// With stdout and stderr on a terminal, a batch draws a progress bar on
// stderr that counts every address line, invalid ones included, and so
// reaches its total; stdout is as without one. (Run with -race: the bar
// must not race the batch.)
func TestBatchProgressOnTerminal(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	c := clitest.Against(srv, "-o", "json", "lookup", "ips", "--file", "-")
	c.Terminal, c.TTYOut = true, true
	// A pipe, which cannot be read twice: the total is unknown.
	c.Stdin = io.MultiReader(strings.NewReader(strings.Join(clitest.Addrs(1500), "\n")))
	r := c.Run(t)
	clitest.RequireCode(t, r, 0)
	assert.Len(t, clitest.NDJSONIPs(t, r.Stdout), 1500, "results")
	assert.Contains(t, r.Stderr, "(1500/", "the progress bar of an unknown total does not count the results")

	// From a regular file the bar knows the total; the file is still read
	// whole after it was counted. A byte order mark is not an address;
	// the invalid lines count.
	file := filepath.Join(t.TempDir(), "ips.txt")
	require.NoError(t, os.WriteFile(file, []byte("\ufeff"+strings.Join(clitest.Addrs(1500), "\n")+"\nnope\n# end\n"+
		strings.Repeat("x", addrinput.MaxLine+10)+"\n"), 0o600))
	c = clitest.Against(srv, "-o", "json", "lookup", "ips", "--file", file)
	c.Terminal, c.TTYOut = true, true
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Len(t, clitest.NDJSONIPs(t, r.Stdout), 1500, "results from a file")
	assert.Contains(t, r.Stderr, "100% ", "the progress bar does not reach 100%")
	assert.Contains(t, r.Stderr, "(1502/1502", "the progress bar does not count every address line")
	assert.Equal(t, int64(2), clitest.ParseSummary(t, r.Stderr).Invalid, "invalid lines")
}

// Duplicates are sent once: one request per batch of distinct addresses,
// a row per distinct address, and the summary counts the duplicates and
// gives the credits the fake charged.
func TestBatchDuplicates(t *testing.T) {
	t.Parallel()
	in := []string{"1.1.1.1", "8.8.8.8", "1.1.1.1", "9.9.9.9", "8.8.8.8", "203.0.113.7", "1.1.1.1"}
	tests := []struct {
		name     string
		flags    []string
		rows     []string
		requests int
		dups     int64
	}{
		{"distinct", nil, []string{"1.1.1.1", "8.8.8.8", "9.9.9.9", "203.0.113.7"}, 2, 3},
		{"keep duplicates", []string{"--keep-duplicates"}, in, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.BatchCall(srv, strings.Join(in, "\n"), append(tt.flags, "--batch-size", "2", "--concurrency", "1")...).Run(t)
			clitest.RequireCode(t, r, 0)
			assert.Equal(t, tt.rows, clitest.NDJSONIPs(t, r.Stdout), "results")
			assert.Equal(t, tt.requests, srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
			s := clitest.ParseSummary(t, r.Stderr)
			assert.Equal(t, tt.dups, s.Duplicates, "duplicates")
			assert.Equal(t, int64(len(tt.rows)), s.LookedUp, "looked up")
			assert.Equal(t, synthienttest.DefaultCredits-srv.Credits(srv.APIKey), s.Credits, "credits spent: the fake's charge")
		})
	}
}

// Chunks that finish out of order are still printed in input order.
func TestBatchOutOfOrderCompletion(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	// The first request to arrive answers last.
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 300 * time.Millisecond})
	in := clitest.Addrs(3500)
	r := clitest.BatchCall(srv, strings.Join(in, "\n"), "--concurrency", "4").Run(t)
	clitest.RequireCode(t, r, 0)
	clitest.AssertAddrs(t, in, clitest.NDJSONIPs(t, r.Stdout), "results")
}

// --concurrency bounds the requests in flight (default 4), and is used.
// The fake sends no RateLimit headers: pacing, which sends a batch alone
// until it knows the limit, is not what is tested; and the first batch,
// sent alone before the headers are known, takes long enough (1 s) for the
// others to be ready when it is answered, however slow the machine.
func TestBatchConcurrencyBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		flags []string
		n     int // addresses: one chunk more than the bound
		want  int
	}{
		{[]string{"--concurrency", "1"}, 2000, 1},
		{[]string{"--concurrency", "3"}, 4000, 3},
		{nil, 5000, 4},
	} {
		t.Run(fmt.Sprint(tt.want), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t, synthienttest.WithoutRateLimits())
			var mu sync.Mutex
			inflight, most := 0, 0
			proxy := clitest.ProxyTo(t, srv, nil)
			base := clitest.ServeFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				inflight++
				most = max(most, inflight)
				mu.Unlock()
				time.Sleep(time.Second)
				proxy.ServeHTTP(w, r)
				mu.Lock()
				inflight--
				mu.Unlock()
			}))

			in := clitest.Addrs(tt.n)
			c := clitest.BatchCall(srv, strings.Join(in, "\n"), tt.flags...)
			c.Args[1] = base
			r := c.Run(t)
			clitest.RequireCode(t, r, 0, c.Args...)
			clitest.AssertAddrs(t, in, clitest.NDJSONIPs(t, r.Stdout), "results")
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tt.want, most, "the most batches in flight")
		})
	}
}

// Invalid lines are reported with their line numbers, and not written to
// --failed (they cannot be sent again); blank and # lines are ignored;
// the valid addresses are looked up, and the run succeeds: exit 0, which
// a script under set -e takes as done.
func TestBatchInvalidLines(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	input := "# header comment\r\n" + // 1
		"1.1.1.1\r\n" + // 2
		"\n" + // 3
		"   \n" + // 4
		"999.1.1.1\n" + // 5
		"  # indented comment\n" + // 6
		"8.8.8.8\n" + // 7
		"example.com\n" + // 8
		"fe80::1%eth0\n" + // 9
		"2606:4700:4700::1111\n" + // 10
		"1.2.3.4/24\n" + // 11
		"203.0.113.7" // 12, no final newline
	failed, unknown, files := clitest.OutFiles(t)
	r := clitest.BatchCall(srv, input, files...).Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "203.0.113.7"}, clitest.NDJSONIPs(t, r.Stdout), "results")
	assert.Equal(t, []string{
		`synthient: line 5: "999.1.1.1" is not an IP address; not looked up`,
		`synthient: line 8: "example.com" is not an IP address; not looked up`,
		`synthient: line 9: "fe80::1%eth0" is not an IP address; not looked up`,
		`synthient: line 11: "1.2.3.4/24" is not an IP address; not looked up`,
		"synthient: 8 addresses read: 4 looked up, 4 invalid, 0 not sent, 0 rejected, 0 unknown (possibly charged), " +
			"0 duplicates not sent again; credits: 4 spent, 0 possibly spent",
	}, clitest.Lines(r.Stderr), "stderr")
	assert.Empty(t, clitest.ReadLines(t, failed), "--failed")
	assert.Empty(t, clitest.ReadLines(t, unknown), "--unknown")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// Only comments and blank lines: nothing to do, nothing sent, exit 0.
func TestBatchNothingToLookUp(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.BatchCall(srv, "# nothing\n\n   \n#1.1.1.1\n").Run(t)
	clitest.RequireCode(t, r, 0)
	assert.Empty(t, r.Stdout, "stdout")
	assert.Equal(t, clitest.Summary{}, clitest.ParseSummary(t, r.Stderr), "summary")
	assert.Empty(t, srv.Requests(), "requests")
}

// An input of which no line is an IP address (the wrong file, the wrong
// column) is a usage error, exit 2, in a run and a dry run: nothing to
// look up. With --quiet its one line says so.
func TestBatchNoAddressAtAll(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"--dry-run"}, {"-q"}} {
		t.Run(strings.Join(append([]string{"run"}, flags...), " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.BatchCall(srv, "login,ip\nalice,nope\n", flags...).Run(t)
			clitest.RequireCode(t, r, clierr.Usage)
			last := clitest.Lines(r.Stderr)[len(clitest.Lines(r.Stderr))-1]
			assert.Contains(t, last, "synthient: no line of the input is an IP address: 2 lines are not", "stderr")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs), "lookups sent")
		})
	}
}

// Addresses given as arguments are looked up as lines of a file would be:
// in order, once each, an invalid one reported with its place.
func TestBatchAddressArguments(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "-o", "json", "lookup", "ips", "1.1.1.1", "8.8.8.8", "nope", "1.1.1.1")
	clitest.RequireCode(t, r, clierr.OK, "lookup ips ADDR...")
	out := clitest.Lines(r.Stdout)
	require.Len(t, out, 2, "one JSON line per distinct address looked up")
	assert.Contains(t, out[0], `"ip":"1.1.1.1"`)
	assert.Contains(t, out[1], `"ip":"8.8.8.8"`)
	assert.Contains(t, r.Stderr, `synthient: line 3: "nope" is not an IP address`)
	assert.Contains(t, r.Stderr, "4 addresses read: 2 looked up, 1 invalid")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "one request")
}

// --quiet leaves on stderr only the final error, or the count of invalid
// lines of a run that otherwise succeeded, also on a terminal;
// --no-progress leaves out the bar only.
func TestBatchQuietAndNoProgress(t *testing.T) {
	t.Parallel()
	in := strings.Join(clitest.Addrs(20), "\n") + "\nnope\n"
	for _, tt := range []struct {
		name   string
		flags  []string
		stderr func(t *testing.T, stderr string)
	}{
		{"quiet", []string{"-q"}, func(t *testing.T, stderr string) {
			assert.Equal(t, "synthient: 1 line is not an IP address (lookup ips --dry-run lists them, without a charge)\n", stderr)
		}},
		{"no progress", []string{"--no-progress"}, func(t *testing.T, stderr string) {
			assert.NotContains(t, stderr, "looking up", "no bar")
			assert.Contains(t, stderr, `synthient: line 21: "nope" is not an IP address`)
			assert.Equal(t, int64(1), clitest.ParseSummary(t, stderr).Invalid)
		}},
		{"neither", nil, func(t *testing.T, stderr string) {
			assert.Contains(t, stderr, "looking up", "the bar, on a terminal")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Against(srv, append(tt.flags, "-o", "json", "lookup", "ips", "--file", "-")...)
			c.Terminal, c.TTYOut = true, true
			c.Stdin = strings.NewReader(in)
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Len(t, clitest.NDJSONIPs(t, r.Stdout), 20, "results")
			tt.stderr(t, r.Stderr)
		})
	}
}

// Results reach stdout as the answers come, while the input is still
// open: a CSV or JSON line per address as its answer is handled, the text
// table a request's rows at a time. (Answers are handled between reads
// of the input: the first request's once the second line was read.)
func TestBatchOutputAsItComes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		output string
		lines  string // written before the first row must show
	}{
		{"csv", "1.1.1.1\n8.8.8.8\n"},
		{"json", "1.1.1.1\n8.8.8.8\n"},
		{"text", "1.1.1.1\n8.8.8.8\n9.9.9.9\n"}, // the second request's answer flushes the first's row
	} {
		t.Run(tt.output, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			pr, pw := io.Pipe()
			defer pw.Close() //nolint:errcheck // an io.PipeWriter's Close returns nil
			c := clitest.Against(srv, "-o", tt.output, "lookup", "ips", "--file", "-", "--batch-size", "1", "--concurrency", "1")
			c.Stdin, c.Stdout = pr, &clitest.SyncBuffer{}
			done := make(chan clitest.Result, 1)
			go func() { done <- c.Run(t) }()
			_, err := io.WriteString(pw, tt.lines)
			require.NoError(t, err)
			assert.Eventually(t, func() bool { return strings.Contains(c.Stdout.String(), "1.1.1.1") },
				2*time.Minute, 10*time.Millisecond, "the first row while the input is open")
			require.NoError(t, pw.Close())
			r := <-done
			clitest.RequireCode(t, r, clierr.OK)
		})
	}
}
