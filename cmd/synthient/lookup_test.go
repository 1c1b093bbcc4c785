package main

// Tests of lookup.go: lookup ip, lookup domain and the batch of lookup
// ips.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
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

// addrs returns n distinct public addresses in canonical form, every
// seventh an IPv6 one.
func addrs(n int) []string {
	out := make([]string, n)
	for i := range out {
		if i%7 == 6 {
			out[i] = netip.AddrFrom16([16]byte{0x2a, 0x00, 0x14, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)}).String()
			continue
		}
		v := uint32(46)<<24 + uint32(i)*97
		out[i] = netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
	}
	return out
}

// batchCall is lookup ips --file - against srv, with extra flags.
func batchCall(srv *synthienttest.Server, input string, flags ...string) call {
	c := against(srv, append([]string{"-o", "json", "lookup", "ips", "--file", "-"}, flags...)...)
	c.stdin = strings.NewReader(input)
	return c
}

// readLines returns the lines of a file.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return lines(string(b))
}

// assertAddrs checks that got is want, in order. It names the first
// difference instead of printing thousands of addresses.
func assertAddrs(t testing.TB, want, got []string, what string) bool {
	t.Helper()
	if slices.Equal(got, want) {
		return true
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return strconv.Quote(s[i])
		}
		return "the end"
	}
	return assert.Fail(t, what+": not the addresses wanted, in order",
		"%d addresses, want %d; the first difference is at %d: %s, want %s", len(got), len(want), i, at(got), at(want))
}

// failedBatchRe matches a failed chunk's report.
var failedBatchRe = regexp.MustCompile(`^synthient: batch (\d+) \((\d+) addresses\) failed: (.*); not looked up: (.*)$`)

// passThrough is a fault that answers normally (the real answer, sent in
// one chunk), to let the first request of a route through an Inject queue.
var passThrough = synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 64 << 20, Delay: time.Millisecond}

// The text output of lookup ip and lookup domain matches its golden file.
func TestGoldenLookup(t *testing.T) {
	t.Parallel()
	checkGolden(t, []goldenCase{
		{"lookup_ip_intelligence", []string{"lookup", "ip", "203.0.113.7"}},
		{"lookup_ip_no_intelligence", []string{"lookup", "ip", "8.8.8.8"}},
		{"lookup_ip_private", []string{"lookup", "ip", "10.0.0.1"}},
		{"lookup_ip_ipv6", []string{"lookup", "ip", "2606:4700:4700::1111"}},
		{"lookup_domain", []string{"lookup", "domain", "example.com", "--limit", "5"}},
	})
}

// A batch's text output is one table in input order.
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
	assert.Empty(t, r.stderr, "stderr")
	golden(t, "lookup_ips_table", r.stdout)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// The failed-chunk report, text output, against its golden file.
func TestGoldenBatchFailureReport(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	failed := filepath.Join(t.TempDir(), "failed.txt")
	c := against(srv, "lookup", "ips", "--file", "-", "--failed", failed)
	c.stdin = strings.NewReader("203.0.113.7\n8.8.8.8\nnot-an-ip\n2606:4700:4700::1111\n")
	r := c.run(t)
	requireCode(t, r, exitAPI)
	golden(t, "lookup_ips_failed", "exit code "+strconv.Itoa(r.code)+"\n--- stdout\n"+r.stdout+"--- stderr\n"+normalise(r.stderr))
	assert.Equal(t, []string{"not-an-ip", "203.0.113.7", "8.8.8.8", "2606:4700:4700::1111"}, readLines(t, failed), "--failed")
}

// --output json: one JSON document per result, with the API's field names,
// and the same bytes from run to run.
func TestJSONLookupIP(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := runSrv(t, srv, "--output", "json", "lookup", "ip", "203.0.113.7")
	requireCode(t, r, 0)
	require.Len(t, lines(r.stdout), 1, "want one JSON document:\n%s", r.stdout)
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	require.NoError(t, dec.Decode(&doc), "not JSON:\n%s", r.stdout)
	require.False(t, dec.More(), "more than one JSON document:\n%s", r.stdout)
	wantKeys := func(what string, m any, keys ...string) {
		t.Helper()
		obj, ok := m.(map[string]any)
		require.True(t, ok, "%s is %T, want an object", what, m)
		var got []string
		for k := range obj {
			got = append(got, k)
		}
		assert.ElementsMatch(t, keys, got, "the members of %s", what)
	}
	wantKeys("the lookup", doc, "ip", "network", "location", "intelligence")
	wantKeys("network", doc["network"], "asn", "isp", "type", "org", "domain", "abuse_email", "abuse_phone")
	wantKeys("location", doc["location"], "country", "state", "city", "timezone", "latitude", "longitude", "geo_hash")
	wantKeys("intelligence", doc["intelligence"], "risk_score", "behavior", "categories", "devices", "providers")
	assert.Equal(t, "203.0.113.7", doc["ip"], `"ip"`)
	golden(t, "lookup_ip_intelligence.json", r.stdout)

	// An address without intelligence has no "intelligence" member.
	r = runSrv(t, srv, "-o", "json", "lookup", "ip", "8.8.8.8")
	requireCode(t, r, 0)
	doc = nil
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "not JSON:\n%s", r.stdout)
	wantKeys("the lookup of 8.8.8.8", doc, "ip", "network", "location")
}

// lookup ips --output json is NDJSON, one result per input line, in input
// order, repeated addresses included.
func TestJSONLookupIPsInputOrder(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	in := []string{"8.8.8.8", "203.0.113.7", "2606:4700:4700::1111", "10.0.0.1", "8.8.8.8", "1.1.1.1", "192.0.2.1"}
	args := []string{"--base-url", srv.URL, "-o", "json", "lookup", "ips", "--file", "-"}
	r := call{args: args, env: keyEnv(srv), stdin: strings.NewReader(strings.Join(in, "\n"))}.run(t)
	requireCode(t, r, 0, args...)
	assert.Equal(t, in, ndjsonIPs(t, r.stdout), "results in input order")
	golden(t, "lookup_ips.ndjson", r.stdout)
}

// 2,500 addresses on stdin with --concurrency 3: three requests (1000,
// 1000, 500) and NDJSON in exactly input order.
func TestBatch2500FromStdin(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	in := addrs(2500)
	r := batchCall(srv, strings.Join(in, "\n")+"\n", "--concurrency", "3").run(t)
	requireCode(t, r, 0)
	assert.Empty(t, r.stderr, "stderr")
	assertAddrs(t, in, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
	// 1000 + 1000 + 500 addresses: ceil(0.9 n) credits each.
	assert.Equal(t, int64(900+900+450), synthienttest.DefaultCredits-srv.Credits(srv.APIKey), "credits spent (chunks of 1000, 1000 and 500)")
}

// With stderr on a terminal, a batch shows a spinner there; stdout is as
// without one. (Run with -race: the spinner must not race the batch.)
func TestBatchProgressOnTerminal(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := against(srv, "-o", "json", "lookup", "ips", "--file", "-")
	c.terminal = true
	c.stdin = strings.NewReader(strings.Join(addrs(1500), "\n"))
	r := c.run(t)
	requireCode(t, r, 0)
	assert.Len(t, ndjsonIPs(t, r.stdout), 1500, "results")

	// From a regular file the bar knows the total; the file is still read
	// whole after it was counted. A byte order mark is not an address.
	file := filepath.Join(t.TempDir(), "ips.txt")
	require.NoError(t, os.WriteFile(file, []byte("\ufeff"+strings.Join(addrs(1500), "\n")+"\n# end\n"), 0o644))
	c = against(srv, "-o", "json", "lookup", "ips", "--file", file)
	c.terminal = true
	r = c.run(t)
	requireCode(t, r, 0)
	assert.Len(t, ndjsonIPs(t, r.stdout), 1500, "results from a file")
	assert.Contains(t, r.stderr, "/1500", "the progress bar does not show the total")
}

// A 503 on the second batch request: exit 3, the batch it carried and its
// addresses on stderr and in --failed, the other results on stdout in
// input order, and the failed batch is not sent again. With one chunk in
// flight at a time the second request is batch 2; with 3 in flight,
// whichever batch it carried is reported, whole.
func TestBatchSecondRequestFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		concurrency string
		batch       int // the failed batch; 0: the one the report names
	}{
		{"one in flight", "1", 2},
		{"under concurrency", "3", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Inject(synthienttest.RouteLookupIPs, 1, passThrough)
			srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
			in := addrs(2500)
			failed := filepath.Join(t.TempDir(), "failed.txt")
			r := batchCall(srv, strings.Join(in, "\n"), "--concurrency", tt.concurrency, "--failed", failed).run(t)
			requireCode(t, r, exitAPI)

			n := tt.batch
			if n == 0 {
				m := failedBatchRe.FindStringSubmatch(lines(r.stderr)[0])
				require.NotNil(t, m, "no failed batch report:\n%.500s", r.stderr)
				n, _ = strconv.Atoi(m[1])
			}
			size := checkFailedBatch(t, srv, r, in, failed, n)
			ls := lines(r.stderr)
			require.Len(t, ls, 2, "stderr lines: want the batch report and a summary:\n%.1000s", r.stderr)
			assert.Equal(t, fmt.Sprintf("synthient: %d of 2500 addresses were not looked up (listed above and in the --failed file)", size), ls[1], "summary")
			assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests (the failed one is not sent again)")
		})
	}
}

// checkFailedBatch checks the report of failed batch n (1-based) of in,
// and returns the number of its addresses.
func checkFailedBatch(t *testing.T, srv *synthienttest.Server, r result, in []string, failed string, n int) int {
	t.Helper()
	lo, hi := (n-1)*1000, min(n*1000, len(in))
	chunk := in[lo:hi]
	rest := append(slices.Clone(in[:lo]), in[hi:]...)

	m := failedBatchRe.FindStringSubmatch(lines(r.stderr)[0])
	require.NotNil(t, m, "the first stderr line is not a failed batch report:\n%.500s", r.stderr)
	assert.Equal(t, []string{strconv.Itoa(n), strconv.Itoa(len(chunk))}, m[1:3], "the batch the report names, and its addresses")
	var id string
	for _, req := range srv.Requests() {
		if req.Status == 503 {
			id = req.RequestID
		}
	}
	for _, w := range []string{"503 Service Unavailable", "request id " + id, "may_have_been_processed"} {
		assert.Contains(t, m[3], w, "the report's error")
	}
	assertAddrs(t, chunk, strings.Fields(m[4]), fmt.Sprintf("the addresses the report lists: want the %d of batch %d", len(chunk), n))
	assertAddrs(t, chunk, readLines(t, failed), fmt.Sprintf("--failed: want the %d addresses of batch %d", len(chunk), n))
	assertAddrs(t, rest, ndjsonIPs(t, r.stdout), fmt.Sprintf("stdout: want the other %d results in input order", len(rest)))
	return len(chunk)
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

// --concurrency bounds the chunks in flight (default 4), and is used.
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
			srv := newServer(t)
			var mu sync.Mutex
			inflight, most := 0, 0
			proxy := proxyTo(t, srv, nil)
			base := serveFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				inflight++
				most = max(most, inflight)
				mu.Unlock()
				time.Sleep(250 * time.Millisecond)
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

// Invalid lines are reported with their line numbers and written to
// --failed; blank and # lines are ignored; exit 2 when nothing else
// failed; the valid addresses are looked up.
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
	failed := filepath.Join(t.TempDir(), "failed.txt")
	r := batchCall(srv, input, "--failed", failed).run(t)
	requireCode(t, r, exitUsage)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "203.0.113.7"}, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, []string{
		`synthient: line 5: "999.1.1.1" is not an IP address; not looked up`,
		`synthient: line 8: "example.com" is not an IP address; not looked up`,
		`synthient: line 9: "fe80::1%eth0" is not an IP address; not looked up`,
		`synthient: line 11: "1.2.3.4/24" is not an IP address; not looked up`,
		"synthient: 4 lines are not IP addresses (listed above and in the --failed file)",
	}, lines(r.stderr), "stderr")
	assert.Equal(t, []string{"999.1.1.1", "example.com", "fe80::1%eth0", "1.2.3.4/24"}, readLines(t, failed), "--failed")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// Only comments and blank lines: nothing to do, nothing sent, exit 0.
func TestBatchNothingToLookUp(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := batchCall(srv, "# nothing\n\n   \n#1.1.1.1\n").run(t)
	requireCode(t, r, 0)
	assert.Empty(t, r.stdout, "stdout")
	assert.Empty(t, r.stderr, "stderr")
	assert.Empty(t, srv.Requests(), "requests")
}

// Invalid lines and a failed batch: exit 3, and --failed holds both.
func TestBatchInvalidAndFailed(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 500})
	failed := filepath.Join(t.TempDir(), "failed.txt")
	r := batchCall(srv, "1.1.1.1\nnope\n8.8.8.8\n", "--failed", failed).run(t)
	requireCode(t, r, exitAPI)
	assert.Empty(t, r.stdout, "stdout")
	assert.ElementsMatch(t, []string{"1.1.1.1", "8.8.8.8", "nope"}, readLines(t, failed), "--failed")
	assert.Contains(t, r.stderr, "2 of 2 addresses were not looked up; 1 line is not an IP address", "stderr")
}

// A response that lacks some results: those addresses are reported and
// written to --failed, the others printed in order; nothing is dropped.
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

	failed := filepath.Join(t.TempDir(), "failed.txt")
	c := batchCall(srv, "1.1.1.1\n8.8.8.8\n203.0.113.7\n2606:4700:4700::1111\n9.9.9.9\n", "--failed", failed)
	c.args[1] = base
	r := c.run(t)
	requireCode(t, r, exitAPI)
	assert.Equal(t, []string{"1.1.1.1", "203.0.113.7", "9.9.9.9"}, ndjsonIPs(t, r.stdout), "results")
	m := failedBatchRe.FindStringSubmatch(lines(r.stderr)[0])
	if assert.NotNil(t, m, "no failed batch report:\n%s", r.stderr) {
		assert.Equal(t, []string{"1", "2"}, m[1:3], "the batch the report names, and its addresses")
		assert.Equal(t, "8.8.8.8 2606:4700:4700::1111", m[4], "the addresses the report lists")
	}
	assert.Equal(t, []string{"8.8.8.8", "2606:4700:4700::1111"}, readLines(t, failed), "--failed")
	assert.Contains(t, r.stderr, "2 of 5 addresses were not looked up", "stderr")
}

// An interrupt while the addresses are still being read (an interactive
// stdin, a pipe that has not ended) stops the batch: exit 130, promptly.
func TestBatchInterruptWhileReading(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := batchCall(srv, "")
	c.stdin, c.ctx = pr, ctx
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	_, err := io.WriteString(pw, "1.1.1.1\n8.8.8.8\n")
	require.NoError(t, err)
	cancel()
	select {
	case r := <-done:
		requireCode(t, r, exitInterrupt)
	case <-time.After(2 * time.Second):
		pw.Close() // let the command end, so the test does not leak it
		r := <-done
		assert.Fail(t, "lookup ips --file - did not return within 2s of the interrupt while stdin was open",
			"it returned only once stdin ended (exit %d)", r.code)
	}
}

// A chunk's results are printed as soon as it is looked up, while the
// addresses after it are still being read (a pipe that has not ended).
func TestBatchPrintsWhileReading(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	in := addrs(1001)
	c := batchCall(srv, "")
	c.stdin, c.stdout = pr, &syncBuffer{}
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	_, err := io.WriteString(pw, strings.Join(in[:1000], "\n")+"\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(lines(c.stdout.String())) == 1000 }, 10*time.Second, 10*time.Millisecond,
		"the results of the first chunk, before the input ends")
	_, err = io.WriteString(pw, in[1000]+"\n")
	require.NoError(t, err)
	pw.Close()
	r := <-done
	requireCode(t, r, 0)
	assertAddrs(t, in, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests")
}

// An interrupt while a chunk is in flight exits 130 (not 3, as if the API
// had failed), and the addresses not looked up are still reported.
func TestBatchInterruptInFlight(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, -1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed := filepath.Join(t.TempDir(), "failed.txt")
	c := batchCall(srv, "1.1.1.1\n8.8.8.8\n", "--failed", failed)
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
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, readLines(t, failed), "--failed")
}

// A line too long to read (over the scanner's 1 MiB) must not make the
// addresses around it vanish: each is looked up or listed as not looked
// up, and the long line is reported with its number.
func TestBatchOverlongLine(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	failed := filepath.Join(t.TempDir(), "failed.txt")
	input := "1.1.1.1\n8.8.8.8\n" + strings.Repeat("x", 2<<20) + "\n9.9.9.9\n"
	r := batchCall(srv, input, "--failed", failed).run(t)
	assert.NotEqual(t, 0, r.code, "exit 0 with an unreadable line")
	assert.Contains(t, r.stderr, "line 3", "stderr does not name line 3")
	accounted := map[string]bool{}
	for _, ip := range ndjsonIPs(t, r.stdout) {
		accounted[ip] = true
	}
	for _, l := range readLines(t, failed) {
		accounted[l] = true
	}
	for _, ip := range []string{"1.1.1.1", "8.8.8.8", "9.9.9.9"} {
		assert.True(t, accounted[ip], "%s was neither looked up nor listed in --failed (exit %d, stderr %.300q)", ip, r.code, r.stderr)
	}
}

// lookup ips with --failed naming the input file (by the same path,
// another path to it, a hard link, a symbolic link, or the file stdin
// comes from with --file -) exits 2 before the input is read or anything
// is sent, and leaves the input as it was: creating --failed would empty
// it first.
func TestBatchFailedIsInput(t *testing.T) {
	t.Parallel()
	const input = "1.1.1.1\n8.8.8.8\n"
	tests := []struct {
		name   string
		failed func(t *testing.T, in string) string // the --failed path for the input file in
		stdin  bool                                 // --file - with stdin from the input file
	}{
		{name: "same path", failed: func(_ *testing.T, in string) string { return in }},
		{name: "another path", failed: func(_ *testing.T, in string) string {
			return filepath.Dir(in) + "/./sub/../" + filepath.Base(in) // not cleaned
		}},
		{name: "hard link", failed: func(t *testing.T, in string) string {
			link := in + ".hard"
			require.NoError(t, os.Link(in, link))
			return link
		}},
		{name: "symbolic link", failed: func(t *testing.T, in string) string {
			link := in + ".sym"
			require.NoError(t, os.Symlink(in, link))
			return link
		}},
		{name: "stdin from the file", stdin: true, failed: func(_ *testing.T, in string) string { return in }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			dir := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			in := filepath.Join(dir, "in.txt")
			require.NoError(t, os.WriteFile(in, []byte(input), 0o644))
			failed := tt.failed(t, in)
			c := against(srv, "lookup", "ips", "--file", in, "--failed", failed)
			if tt.stdin {
				f, err := os.Open(in)
				require.NoError(t, err)
				defer f.Close()
				c = against(srv, "lookup", "ips", "--file", "-", "--failed", failed)
				c.stdin = f
			}
			r := c.run(t)
			requireCode(t, r, exitUsage, c.args...)
			assert.Contains(t, r.stderr, "--failed "+failed+" is the input file", "stderr")
			b, err := os.ReadFile(in)
			assert.NoError(t, err, "the input")
			assert.Equal(t, input, string(b), "the input")
			assert.Empty(t, srv.Requests(), "requests sent")
			assert.Empty(t, r.stdout, "stdout")
		})
	}
}

// A line of a lookup ips file that is not an address is shown cut to 80
// bytes after the keys in it were redacted: the configured key, in any
// case, and anything shaped like a key, also where the cut falls inside
// it (at byte 80 of a line, or of a line too long to read).
func TestBatchInvalidLineEchoesKey(t *testing.T) {
	t.Parallel()
	const key, pasted = configuredKey, pastedKey
	pad := strings.Repeat("x", 70) + " " // a key after it straddles byte 80
	tests := []struct {
		name, line, secret string
	}{
		{"configured key cut", pad + key, key},
		{"configured key in upper case", "key " + strings.ToUpper(key), key},
		{"key shape cut", pad + pasted, pasted},
		{"key shape in a header", "x-api-key: " + strings.ToUpper(pasted), pasted},
		{"overlong line", pad + pasted + strings.Repeat("y", maxInputLine), pasted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := call{args: []string{"--base-url", srv.URL, "lookup", "ips", "--file", "-"},
				env: map[string]string{"SYNTHIENT_API_KEY": key}, stdin: strings.NewReader(tt.line + "\n")}
			r := c.run(t)
			requireCode(t, r, exitUsage, c.args...)
			assert.NotContains(t, strings.ToLower(r.stderr), tt.secret[:8], "stderr shows part of the key")
			assert.Contains(t, r.stderr, "line 1: ", "stderr does not report line 1")
			assert.Contains(t, r.stderr, "[redac", "stderr does not report line 1 redacted")
		})
	}
}

// Ctrl-C (the context cancelled) stops lookup ips while it opens a
// --file that is a named pipe, which blocks until a writer opens it. The
// command exits 130 and sends nothing; the open it abandons ends when the
// test opens the pipe for writing. (A --failed named pipe does not block:
// os.Create opens it for reading and writing.)
func TestBatchOpenInterrupted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	makeFIFO(t, fifo)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // before the open: the open cannot complete before the command returns
	c := against(srv, "lookup", "ips", "--file", fifo)
	c.ctx = ctx
	r := c.run(t) // before the fix: blocked in the open for ever
	if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		f.Close()
	}
	requireCode(t, r, exitInterrupt, c.args...)
	assert.Equal(t, "synthient: interrupted\n", r.stderr, "stderr")
	assert.Empty(t, r.stdout, "stdout")
	assert.Empty(t, srv.Requests(), "requests sent")
}

// An invalid line's key shapes are redacted where the line is printed, and
// never join the secrets every later line of output is searched for: a file
// of key-shaped lines must not make each line slower to print than the
// last.
func TestBatchInvalidLinesDoNotGrowTheSecrets(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	a := &app{env: &env{stderr: &stderr}, secrets: &redactor{}}
	b := &batch{app: a}
	for i := range 100 {
		key := fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012x", i, i)
		b.reportInvalid(i+1, "token "+key+key[:20], "")
		assert.NotContains(t, stderr.String(), key, "line %d printed its key", i+1)
	}
	assert.Empty(t, a.secrets.secrets, "secrets added by invalid lines")
	assert.Equal(t, 100, strings.Count(stderr.String(), redacted), "redacted keys")
}
