package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/synthienttest"
)

// A batch's text output is one table in input order, and the summary
// on stderr.
func TestGoldenLookupIPsTable(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
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
	r := call{args: args, env: keyEnv(srv), stdin: strings.NewReader(in)}.run(t)
	requireCode(t, r, 0, args...)
	assert.Equal(t, []string{"synthient: 8 addresses read: 8 looked up, 0 invalid, 0 not sent, 0 rejected, 0 unknown (possibly charged), " +
		"0 duplicates not sent again; credits: 8 spent, 0 possibly spent"}, lines(r.stderr), "stderr")
	golden(t, "lookup_ips_table", r.stdout)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// The report of a failed request, text output, against its golden file:
// an invalid line with its number, one line for the request's addresses
// (possibly charged, never "not looked up"), the summary and the error.
func TestGoldenBatchFailureReport(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	failed, unknown, files := outFiles(t)
	c := against(srv, append([]string{"lookup", "ips", "--file", "-"}, files...)...)
	c.stdin = strings.NewReader("203.0.113.7\n8.8.8.8\nnot-an-ip\n2606:4700:4700::1111\n")
	r := c.run(t)
	requireCode(t, r, exitAPI)
	out := strings.ReplaceAll(r.stdout+"--- stderr\n"+normalise(r.stderr), filepath.Dir(failed), "DIR")
	golden(t, "lookup_ips_failed", "exit code "+strconv.Itoa(r.code)+"\n--- stdout\n"+out)
	assert.Empty(t, readLines(t, failed), "--failed: nothing is safe to send again")
	assert.Equal(t, []string{"203.0.113.7", "8.8.8.8", "2606:4700:4700::1111"}, readLines(t, unknown), "--unknown")
	assert.NotContains(t, r.stderr, "203.0.113.7", "stderr lists the addresses: they are in the file")
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
			srv := newServer(t)
			r := batchCall(srv, strings.Join(in, "\n"), tt.flags...).run(t)
			requireCode(t, r, 0)
			assert.Equal(t, tt.want, ndjsonIPs(t, r.stdout), "results in input order")
			assert.Equal(t, tt.dups, parseSummary(t, r.stderr).duplicates, "duplicates")
			if tt.flags == nil {
				golden(t, "lookup_ips.ndjson", r.stdout)
			}
		})
	}
}

// 2,500 addresses on stdin with --concurrency 3: three requests (1000,
// 1000, 500) and NDJSON in exactly input order; the credits the summary
// gives are those the fake charged.
func TestBatch2500FromStdin(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	in := addrs(2500)
	r := batchCall(srv, strings.Join(in, "\n")+"\n", "--concurrency", "3").run(t)
	requireCode(t, r, 0)
	assertAddrs(t, in, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
	// 1000 + 1000 + 500 addresses: ceil(0.9 n) credits each.
	spent := synthienttest.DefaultCredits - srv.Credits(srv.APIKey)
	assert.Equal(t, int64(900+900+450), spent, "credits spent (chunks of 1000, 1000 and 500)")
	s := parseSummary(t, r.stderr)
	assert.Equal(t, ipsSummary{read: 2500, lookedUp: 2500, credits: spent}, s, "summary")
}

// With stderr on a terminal, a batch draws a progress bar there that
// counts every address line, invalid ones included, and so reaches its
// total; stdout is as without one. (Run with -race: the bar must not race
// the batch.)
func TestBatchProgressOnTerminal(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := against(srv, "-o", "json", "lookup", "ips", "--file", "-")
	c.terminal = true
	c.stdin = strings.NewReader(strings.Join(addrs(1500), "\n"))
	r := c.run(t)
	requireCode(t, r, 0)
	assert.Len(t, ndjsonIPs(t, r.stdout), 1500, "results")
	assert.Contains(t, r.stderr, "(1500/", "the progress bar of an unknown total does not count the results")

	// From a regular file the bar knows the total; the file is still read
	// whole after it was counted. A byte order mark is not an address;
	// the invalid lines count.
	file := filepath.Join(t.TempDir(), "ips.txt")
	require.NoError(t, os.WriteFile(file, []byte("\ufeff"+strings.Join(addrs(1500), "\n")+"\nnope\n# end\n"+
		strings.Repeat("x", maxInputLine+10)+"\n"), 0o644))
	c = against(srv, "-o", "json", "lookup", "ips", "--file", file)
	c.terminal = true
	r = c.run(t)
	requireCode(t, r, exitOK)
	assert.Len(t, ndjsonIPs(t, r.stdout), 1500, "results from a file")
	assert.Contains(t, r.stderr, "100% ", "the progress bar does not reach 100%")
	assert.Contains(t, r.stderr, "(1502/1502", "the progress bar does not count every address line")
	assert.Equal(t, int64(2), parseSummary(t, r.stderr).invalid, "invalid lines")
}

// A request that fails after it was sent (a 503, a connection closed
// after the request) leaves its addresses' outcome unknown: they go to
// --unknown, stderr says they are possibly charged and must not be resent
// blindly (never "not looked up"), the other results are on stdout in
// input order, and the request is not sent again. A 422 charges nothing:
// its addresses are safe to send again and go to --failed.
func TestBatchRequestFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fault       synthienttest.Fault
		concurrency string
		unknown     bool // else rejected
	}{
		{"503 one in flight", synthienttest.Fault{Status: 503}, "1", true},
		{"503 under concurrency", synthienttest.Fault{Status: 503}, "3", true},
		{"closed after the request", synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest}, "1", true},
		{"422", synthienttest.Fault{Status: 422}, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Inject(synthienttest.RouteLookupIPs, 1, passThrough)
			srv.Inject(synthienttest.RouteLookupIPs, 1, tt.fault)
			in := addrs(2500)
			failed, unknown, files := outFiles(t)
			r := batchCall(srv, strings.Join(in, "\n"), append(files, "--concurrency", tt.concurrency)...).run(t)
			requireCode(t, r, exitAPI)
			assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests (the failed one is not sent again)")

			gs := groups(r.stderr)
			require.Len(t, gs, 1, "want one report of the failed request:\n%.1000s", r.stderr)
			first, _ := strconv.Atoi(gs[0][1])
			lo := first - 1
			hi := min(lo+1000, 2500)
			require.Zero(t, lo%1000, "the report names lines %s-%s, not a whole batch", gs[0][1], gs[0][2])
			assert.Equal(t, []string{strconv.Itoa(hi), strconv.Itoa(hi - lo)}, gs[0][2:4], "the report's last line and count")
			batch, rest := in[lo:hi], append(slices.Clone(in[:lo]), in[hi:]...)
			assertAddrs(t, rest, ndjsonIPs(t, r.stdout), "stdout: the other results in input order")
			s := parseSummary(t, r.stderr)
			if tt.unknown {
				assert.Contains(t, gs[0][4], "possibly charged", "the report")
				assert.Contains(t, gs[0][4], "do not resend blindly (in --unknown "+unknown+")", "the report")
				assertAddrs(t, batch, readLines(t, unknown), "--unknown")
				assert.Empty(t, readLines(t, failed), "--failed")
				assert.Equal(t, int64(hi-lo), s.unknown, "unknown")
				assert.Equal(t, int64((9*(hi-lo)+9)/10), s.maybeCredits, "credits possibly spent")
				assert.NotContains(t, r.stderr, "not looked up", "stderr")
			} else {
				assert.Contains(t, gs[0][4], "rejected without a charge", "the report")
				assertAddrs(t, batch, readLines(t, failed), "--failed")
				assert.Empty(t, readLines(t, unknown), "--unknown")
				assert.Equal(t, int64(hi-lo), s.rejected, "rejected")
			}
			assert.Equal(t, synthienttest.DefaultCredits-srv.Credits(srv.APIKey), s.credits, "credits spent: the fake's charge")
		})
	}
}

// Credits for 2 of 5 batches, one in flight: the third request is answered
// 402 and nothing more is sent; the rest of the input is still read and
// counted as not sent; --failed holds every address of the 402 and after,
// safe to send again.
func TestBatchCreditsRunOut(t *testing.T) {
	t.Parallel()
	srv := newServer(t, synthienttest.WithCredits(2*9))
	in := addrs(50)
	failed, unknown, files := outFiles(t)
	r := batchCall(srv, strings.Join(in, "\n"), append(files, "--concurrency", "1", "--batch-size", "10")...).run(t)
	requireCode(t, r, exitAPI)
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "requests sent")
	assertAddrs(t, in[:20], ndjsonIPs(t, r.stdout), "results")
	assertAddrs(t, in[20:], readLines(t, failed), "--failed")
	assert.Empty(t, readLines(t, unknown), "--unknown")
	assert.Equal(t, ipsSummary{read: 50, lookedUp: 20, rejected: 10, notSent: 20, credits: 18}, parseSummary(t, r.stderr), "summary")
	gs := groups(r.stderr)
	require.Len(t, gs, 2, "reports:\n%s", r.stderr)
	assert.Equal(t, []string{"21", "30", "10"}, gs[0][1:4], "the rejected request")
	assert.Contains(t, gs[0][5], "402 Payment Required", "the rejected request")
	assert.Equal(t, []string{"31", "50", "20"}, gs[1][1:4], "the addresses not sent")
	assert.Contains(t, gs[1][4], "not sent, safe to send again (in --failed "+failed+")", "the addresses not sent")
	assert.Equal(t, int64(0), srv.Credits(srv.APIKey), "credits left")
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
			srv := newServer(t)
			r := batchCall(srv, strings.Join(in, "\n"), append(tt.flags, "--batch-size", "2", "--concurrency", "1")...).run(t)
			requireCode(t, r, 0)
			assert.Equal(t, tt.rows, ndjsonIPs(t, r.stdout), "results")
			assert.Equal(t, tt.requests, srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
			s := parseSummary(t, r.stderr)
			assert.Equal(t, tt.dups, s.duplicates, "duplicates")
			assert.Equal(t, int64(len(tt.rows)), s.lookedUp, "looked up")
			assert.Equal(t, synthienttest.DefaultCredits-srv.Credits(srv.APIKey), s.credits, "credits spent: the fake's charge")
		})
	}
}

// Chunks that finish out of order are still printed in input order.
func TestBatchOutOfOrderCompletion(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// The first request to arrive answers last.
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 300 * time.Millisecond})
	in := addrs(3500)
	r := batchCall(srv, strings.Join(in, "\n"), "--concurrency", "4").run(t)
	requireCode(t, r, 0)
	assertAddrs(t, in, ndjsonIPs(t, r.stdout), "results")
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
			srv := newServer(t, synthienttest.WithoutRateLimits())
			var mu sync.Mutex
			inflight, most := 0, 0
			proxy := proxyTo(t, srv, nil)
			base := serveFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

			in := addrs(tt.n)
			c := batchCall(srv, strings.Join(in, "\n"), tt.flags...)
			c.args[1] = base
			r := c.run(t)
			requireCode(t, r, 0, c.args...)
			assertAddrs(t, in, ndjsonIPs(t, r.stdout), "results")
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
	srv := newServer(t)
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
	failed, unknown, files := outFiles(t)
	r := batchCall(srv, input, files...).run(t)
	requireCode(t, r, exitOK)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "203.0.113.7"}, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, []string{
		`synthient: line 5: "999.1.1.1" is not an IP address; not looked up`,
		`synthient: line 8: "example.com" is not an IP address; not looked up`,
		`synthient: line 9: "fe80::1%eth0" is not an IP address; not looked up`,
		`synthient: line 11: "1.2.3.4/24" is not an IP address; not looked up`,
		"synthient: 8 addresses read: 4 looked up, 4 invalid, 0 not sent, 0 rejected, 0 unknown (possibly charged), " +
			"0 duplicates not sent again; credits: 4 spent, 0 possibly spent",
	}, lines(r.stderr), "stderr")
	assert.Empty(t, readLines(t, failed), "--failed")
	assert.Empty(t, readLines(t, unknown), "--unknown")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// Only comments and blank lines: nothing to do, nothing sent, exit 0.
func TestBatchNothingToLookUp(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := batchCall(srv, "# nothing\n\n   \n#1.1.1.1\n").run(t)
	requireCode(t, r, 0)
	assert.Empty(t, r.stdout, "stdout")
	assert.Equal(t, ipsSummary{}, parseSummary(t, r.stderr), "summary")
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
			srv := newServer(t)
			r := batchCall(srv, "login,ip\nalice,nope\n", flags...).run(t)
			requireCode(t, r, exitUsage)
			last := lines(r.stderr)[len(lines(r.stderr))-1]
			assert.Contains(t, last, "synthient: no line of the input is an IP address: 2 lines are not", "stderr")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs), "lookups sent")
		})
	}
}

// Invalid lines and a failed request: exit 3 (the API's failure comes
// first), the invalid line in no file, the request's addresses in
// --unknown.
func TestBatchInvalidAndFailed(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 500})
	failed, unknown, files := outFiles(t)
	r := batchCall(srv, "1.1.1.1\nnope\n8.8.8.8\n", files...).run(t)
	requireCode(t, r, exitAPI)
	assert.Empty(t, r.stdout, "stdout")
	assert.Empty(t, readLines(t, failed), "--failed")
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, readLines(t, unknown), "--unknown")
	assert.Equal(t, ipsSummary{read: 3, invalid: 1, unknown: 2, maybeCredits: 2}, parseSummary(t, r.stderr), "summary")
	assert.Contains(t, r.stderr, "2 addresses possibly charged, do not resend blindly (in --unknown "+unknown+"); 1 line is not an IP address", "stderr")
}

// A response that lacks some results: the API did the work, so those
// addresses are possibly charged and go to --unknown; the others are
// printed in order; nothing is dropped.
func TestBatchPartialResponse(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	drop := map[string]bool{"8.8.8.8": true, "2606:4700:4700::1111": true}
	base := serveFront(t, proxyTo(t, srv, func(resp *http.Response) error {
		if resp.Request.URL.Path != "/api/v4/lookup/ips" || resp.StatusCode != 200 {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var body struct {
			Results []map[string]any `json:"results"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			return err
		}
		body.Results = slices.DeleteFunc(body.Results, func(r map[string]any) bool { return drop[r["ip"].(string)] })
		b, _ = json.Marshal(body)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}))

	failed, unknown, files := outFiles(t)
	c := batchCall(srv, "1.1.1.1\n8.8.8.8\n203.0.113.7\n2606:4700:4700::1111\n9.9.9.9\n", files...)
	c.args[1] = base
	r := c.run(t)
	requireCode(t, r, exitAPI)
	assert.Equal(t, []string{"1.1.1.1", "203.0.113.7", "9.9.9.9"}, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, []string{"8.8.8.8", "2606:4700:4700::1111"}, readLines(t, unknown), "--unknown")
	assert.Empty(t, readLines(t, failed), "--failed")
	s := parseSummary(t, r.stderr)
	assert.Equal(t, int64(3), s.lookedUp, "looked up")
	assert.Equal(t, int64(2), s.unknown, "unknown")
	assert.Equal(t, synthienttest.DefaultCredits-srv.Credits(srv.APIKey), s.credits+s.maybeCredits, "credits: the fake's charge")
}

// Ctrl-C once the first 100 results are printed, with batches read and
// not sent: every address read is printed or in a file, the summary's
// counts add up to the lines read, and the line the run stopped after is
// named; the lines after it are in no output.
func TestBatchInterruptAccountsEveryAddress(t *testing.T) {
	t.Parallel()
	for _, concurrency := range []string{"1", "4"} {
		t.Run(concurrency, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &cancelAfter{n: 100, cancel: cancel}
			in := addrs(5000)
			failed, unknown, files := outFiles(t)
			c := batchCall(srv, strings.Join(in, "\n")+"\n", append(files, "--concurrency", concurrency, "--batch-size", "100")...)
			c.ctx, c.stdoutTo = ctx, out
			r := c.run(t)
			requireCode(t, r, exitInterrupt)
			m := regexp.MustCompile(`stopped after line (\d+) of the input`).FindStringSubmatch(r.stderr)
			require.NotNil(t, m, "stderr does not name the last line read:\n%.2000s", r.stderr)
			read, _ := strconv.Atoi(m[1])
			require.Less(t, read, 5000, "the whole input was read")
			s := parseSummary(t, r.stderr)
			assert.Equal(t, int64(read), s.read, "the addresses the summary counts")
			rows, nf, nu := ndjsonIPs(t, out.String()), fileLines(t, failed), fileLines(t, unknown)
			assert.GreaterOrEqual(t, len(rows), 100, "results printed")
			assert.Equal(t, []int64{s.lookedUp, s.notSent + s.rejected, s.unknown}, []int64{int64(len(rows)), int64(len(nf)), int64(len(nu))},
				"looked up, --failed, --unknown")
			all := append(append(slices.Clone(rows), nf...), nu...)
			slices.SortFunc(all, func(a, b string) int { return strings.Compare(a, b) })
			want := slices.Clone(in[:read])
			slices.Sort(want)
			assertAddrs(t, want, all, "every address read, printed or in a file, once")
		})
	}
}

// An interrupt while a request is in flight exits 130 (not 3, as if the
// API had failed), and its addresses are reported: possibly charged, in
// --unknown, since the request may have reached the API.
func TestBatchInterruptInFlight(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, -1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed, unknown, files := outFiles(t)
	c := batchCall(srv, "1.1.1.1\n8.8.8.8\n", files...)
	c.ctx = ctx
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	require.Eventually(t, func() bool { return srv.Arrivals(synthienttest.RouteLookupIPs) == 1 }, 10*time.Second, 10*time.Millisecond, "the batch request")
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "lookup ips did not return within 10s of the interrupt")
	}
	assert.Equal(t, exitInterrupt, r.code, "exit code after an interrupt; stderr:\n%s", r.stderr)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, readLines(t, unknown), "--unknown")
	assert.Empty(t, readLines(t, failed), "--failed")
	assert.Equal(t, int64(2), parseSummary(t, r.stderr).unknown, "unknown")
}

// An output file (--failed, --unknown) naming the input file (by the same
// path, another path to it, a hard link, a symbolic link, or the file
// stdin comes from with --file -), and --failed and --unknown naming one
// file, exit 2 before the input is read or anything is sent, and leave
// the input as it was: creating the output would empty it first.
func TestBatchOutputIsInput(t *testing.T) {
	t.Parallel()
	const input = "1.1.1.1\n8.8.8.8\n"
	tests := []struct {
		name  string
		flag  string
		path  func(t *testing.T, in string) string // the output path for the input file in
		stdin bool                                 // --file - with stdin from the input file
		want  string                               // on stderr; default: flag+" "+path+" is the input file"
	}{
		{name: "same path", flag: "--failed", path: func(_ *testing.T, in string) string { return in }},
		{name: "another path", flag: "--failed", path: func(_ *testing.T, in string) string {
			return filepath.Dir(in) + "/./sub/../" + filepath.Base(in) // not cleaned
		}},
		{name: "hard link", flag: "--failed", path: func(t *testing.T, in string) string {
			link := in + ".hard"
			require.NoError(t, os.Link(in, link))
			return link
		}},
		{name: "symbolic link", flag: "--unknown", path: func(t *testing.T, in string) string {
			link := in + ".sym"
			require.NoError(t, os.Symlink(in, link))
			return link
		}},
		{name: "stdin from the file", flag: "--unknown", stdin: true, path: func(_ *testing.T, in string) string { return in }},
		{name: "failed is unknown", flag: "--failed", path: func(_ *testing.T, in string) string {
			return filepath.Join(filepath.Dir(in), "sub", "out.txt")
		}, want: "are the same file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			dir := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			in := filepath.Join(dir, "in.txt")
			require.NoError(t, os.WriteFile(in, []byte(input), 0o644))
			out := tt.path(t, in)
			file, want := in, tt.flag+" "+out+" is the input file"
			flags := []string{tt.flag, out}
			if tt.want != "" { // --unknown: the same file by another path
				flags, want = append(flags, "--unknown", filepath.Join(dir, "sub", "..", "sub", "out.txt")), tt.want
			}
			if tt.stdin {
				file = "-"
			}
			c := against(srv, append([]string{"lookup", "ips", "--file", file}, flags...)...)
			if tt.stdin {
				f, err := os.Open(in)
				require.NoError(t, err)
				defer f.Close()
				c.stdin = f
			}
			r := c.run(t)
			requireCode(t, r, exitUsage, c.args...)
			assert.Contains(t, r.stderr, want, "stderr")
			b, err := os.ReadFile(in)
			assert.NoError(t, err, "the input")
			assert.Equal(t, input, string(b), "the input")
			assert.Empty(t, srv.Requests(), "requests sent")
			assert.Empty(t, r.stdout, "stdout")
		})
	}
}

// --dry-run reads and checks the input, prints what the run would send
// and cost, and the credits left (a free request); no lookup is sent and
// no output file created. Invalid lines are reported and counted as in a
// run.
func TestBatchDryRun(t *testing.T) {
	t.Parallel()
	in := "1.1.1.1\n8.8.8.8\nnope\n1.1.1.1\n9.9.9.9\n"
	tests := []struct {
		name   string
		flags  []string
		noKey  bool
		stdout []string
		code   int
	}{
		{"text", nil, false, []string{"Addresses     5", "Invalid       1", "Duplicates    1", "Distinct      3", "Requests      2", "Credits       3",
			fmt.Sprintf("Credits left  %d (enough)", synthienttest.DefaultCredits)}, exitOK},
		{"json", []string{"-o", "json"}, false, []string{fmt.Sprintf(
			`{"addresses":5,"invalid":1,"duplicates":1,"distinct":3,"requests":2,"credits":3,"credits_left":%d,"fits":true}`, synthienttest.DefaultCredits)}, exitOK},
		{"no key", nil, true, []string{"Addresses   5", "Invalid     1", "Duplicates  1", "Distinct    3", "Requests    2", "Credits     3"}, exitOK},
		{"csv", []string{"-o", "csv"}, false, []string{"addresses,invalid,duplicates,distinct,requests,credits,credits_left,fits",
			fmt.Sprintf("5,1,1,3,2,3,%d,true", synthienttest.DefaultCredits)}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			failed, unknown, files := outFiles(t)
			c := against(srv, append(append(tt.flags, "lookup", "ips", "--file", "-", "--dry-run", "--batch-size", "2"), files...)...)
			if tt.noKey {
				c.env = nil
			}
			c.stdin = strings.NewReader(in)
			r := c.run(t)
			requireCode(t, r, tt.code, c.args...)
			assert.Equal(t, tt.stdout, lines(r.stdout), "stdout")
			assert.Contains(t, r.stderr, `synthient: line 3: "nope" is not an IP address`, "stderr")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs)+srv.Arrivals(synthienttest.RouteLookupIP), "lookups sent")
			assert.NoFileExists(t, failed, "--failed")
			assert.NoFileExists(t, unknown, "--unknown")
		})
	}
}

// An output file that cannot be created is a usage error before anything
// is sent, and the other one keeps what it held: neither is emptied until
// both are open.
func TestBatchListNotCreatable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept.txt")
	missing := filepath.Join(dir, "no-such-dir", "out.txt")
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"--unknown", []string{"--failed", kept, "--unknown", missing}},
		{"--failed", []string{"--failed", missing, "--unknown", kept}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(kept, []byte("9.9.9.9\n"), 0o600))
			srv := newServer(t)
			c := against(srv, append([]string{"lookup", "ips", "--file", "-"}, tt.flags...)...)
			c.stdin = strings.NewReader("1.1.1.1\n")
			r := c.run(t)
			requireCode(t, r, exitUsage, c.args...)
			assert.Contains(t, r.stderr, tt.name+":")
			got, err := os.ReadFile(kept)
			require.NoError(t, err)
			assert.Equal(t, "9.9.9.9\n", string(got), "the other file keeps what it held")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs), "lookups sent")
		})
	}
}

// Addresses given as arguments are looked up as lines of a file would be:
// in order, once each, an invalid one reported with its place.
func TestBatchAddressArguments(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := runSrv(t, srv, "-o", "json", "lookup", "ips", "1.1.1.1", "8.8.8.8", "nope", "1.1.1.1")
	requireCode(t, r, exitOK, "lookup ips ADDR...")
	out := lines(r.stdout)
	require.Len(t, out, 2, "one JSON line per distinct address looked up")
	assert.Contains(t, out[0], `"ip":"1.1.1.1"`)
	assert.Contains(t, out[1], `"ip":"8.8.8.8"`)
	assert.Contains(t, r.stderr, `synthient: line 3: "nope" is not an IP address`)
	assert.Contains(t, r.stderr, "4 addresses read: 2 looked up, 1 invalid")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "one request")
}

// --quiet leaves on stderr only the final error, or the count of invalid
// lines of a run that otherwise succeeded, also on a terminal;
// --no-progress leaves out the bar only.
func TestBatchQuietAndNoProgress(t *testing.T) {
	t.Parallel()
	in := strings.Join(addrs(20), "\n") + "\nnope\n"
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
			assert.Equal(t, int64(1), parseSummary(t, stderr).invalid)
		}},
		{"neither", nil, func(t *testing.T, stderr string) {
			assert.Contains(t, stderr, "looking up", "the bar, on a terminal")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := against(srv, append(tt.flags, "-o", "json", "lookup", "ips", "--file", "-")...)
			c.terminal = true
			c.stdin = strings.NewReader(in)
			r := c.run(t)
			requireCode(t, r, exitOK)
			assert.Len(t, ndjsonIPs(t, r.stdout), 20, "results")
			tt.stderr(t, r.stderr)
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
			srv := newServer(t)
			pr, pw := io.Pipe()
			defer pw.Close()
			c := against(srv, "-o", tt.output, "lookup", "ips", "--file", "-", "--batch-size", "1", "--concurrency", "1")
			c.stdin, c.stdout = pr, &syncBuffer{}
			done := make(chan result, 1)
			go func() { done <- c.run(t) }()
			_, err := io.WriteString(pw, tt.lines)
			require.NoError(t, err)
			assert.Eventually(t, func() bool { return strings.Contains(c.stdout.String(), "1.1.1.1") },
				10*time.Second, 10*time.Millisecond, "the first row while the input is open")
			require.NoError(t, pw.Close())
			r := <-done
			requireCode(t, r, exitOK)
		})
	}
}
