package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	if err != nil {
		t.Fatal(err)
	}
	return lines(string(b))
}

// failedBatchRe matches a failed chunk's report.
var failedBatchRe = regexp.MustCompile(`^synthient: batch (\d+) \((\d+) addresses\) failed: (.*); not looked up: (.*)$`)

// 2,500 addresses on stdin with --concurrency 3: three requests (1000,
// 1000, 500) and NDJSON in exactly input order.
func TestBatch2500FromStdin(t *testing.T) {
	srv := newServer(t)
	in := addrs(2500)
	r := batchCall(srv, strings.Join(in, "\n")+"\n", "--concurrency", "3").run(t)
	wantCode(t, r, 0)
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	if got := ndjsonIPs(t, r.stdout); !slices.Equal(got, in) {
		t.Errorf("%d results, not in input order (first difference at %d)", len(got), firstDiff(got, in))
	}
	if n := srv.Arrivals(synthienttest.RouteLookupIPs); n != 3 {
		t.Errorf("%d batch requests, want 3", n)
	}
	// 1000 + 1000 + 500 addresses: ceil(0.9 n) credits each.
	if spent := synthienttest.DefaultCredits - srv.Credits(srv.APIKey); spent != 900+900+450 {
		t.Errorf("%d credits spent, want 2250 (chunks of 1000, 1000 and 500)", spent)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// passThrough is a fault that answers normally (the real answer, sent in
// one chunk), to let the first request of a route through an Inject queue.
var passThrough = synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 64 << 20, Delay: time.Millisecond}

// A 503 on the second batch request: exit 3, batch 2 and its 1000
// addresses on stderr and in --failed, the other 1500 results on stdout in
// input order.
func TestBatchSecondRequestFails(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, passThrough)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	in := addrs(2500)
	failed := filepath.Join(t.TempDir(), "failed.txt")
	// One chunk in flight at a time, so the second request is batch 2.
	r := batchCall(srv, strings.Join(in, "\n"), "--concurrency", "1", "--failed", failed).run(t)
	wantCode(t, r, exitAPI)

	checkFailedBatch(t, srv, r, in, failed, 2)
	ls := lines(r.stderr)
	if len(ls) != 2 {
		t.Fatalf("stderr has %d lines, want the batch report and a summary:\n%.2000s", len(ls), r.stderr)
	}
	if want := "synthient: 1000 of 2500 addresses were not looked up (listed above and in the --failed file)"; ls[1] != want {
		t.Errorf("summary %q, want %q", ls[1], want)
	}
	if n := srv.Arrivals(synthienttest.RouteLookupIPs); n != 3 {
		t.Errorf("%d batch requests, want 3 (the failed one is not sent again)", n)
	}
}

// checkFailedBatch checks the report of failed batch n (1-based) of in.
func checkFailedBatch(t *testing.T, srv *synthienttest.Server, r result, in []string, failed string, n int) {
	t.Helper()
	lo, hi := (n-1)*1000, min(n*1000, len(in))
	chunk := in[lo:hi]
	rest := append(slices.Clone(in[:lo]), in[hi:]...)

	m := failedBatchRe.FindStringSubmatch(lines(r.stderr)[0])
	if m == nil {
		t.Fatalf("the first stderr line is not a failed batch report:\n%.500s", r.stderr)
	}
	if m[1] != strconv.Itoa(n) || m[2] != strconv.Itoa(len(chunk)) {
		t.Errorf("report names batch %s (%s addresses), want batch %d (%d addresses)", m[1], m[2], n, len(chunk))
	}
	var id string
	for _, req := range srv.Requests() {
		if req.Status == 503 {
			id = req.RequestID
		}
	}
	for _, w := range []string{"503 Service Unavailable", "request id " + id, "may_have_been_processed"} {
		if !strings.Contains(m[3], w) {
			t.Errorf("report's error %q does not hold %q", m[3], w)
		}
	}
	if got := strings.Fields(m[4]); !slices.Equal(got, chunk) {
		t.Errorf("report lists %d addresses, want the %d of batch %d (first difference at %d)", len(got), len(chunk), n, firstDiff(got, chunk))
	}
	if got := readLines(t, failed); !slices.Equal(got, chunk) {
		t.Errorf("--failed holds %d lines, want the %d addresses of batch %d (first difference at %d)", len(got), len(chunk), n, firstDiff(got, chunk))
	}
	if got := ndjsonIPs(t, r.stdout); !slices.Equal(got, rest) {
		t.Errorf("stdout holds %d results, want the other %d in input order (first difference at %d)", len(got), len(rest), firstDiff(got, rest))
	}
}

// The same with 3 chunks in flight: whichever batch the second request
// carried is reported, whole, and the rest printed in input order.
func TestBatchFailureUnderConcurrency(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, passThrough)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	in := addrs(2500)
	failed := filepath.Join(t.TempDir(), "failed.txt")
	r := batchCall(srv, strings.Join(in, "\n"), "--concurrency", "3", "--failed", failed).run(t)
	wantCode(t, r, exitAPI)
	m := failedBatchRe.FindStringSubmatch(lines(r.stderr)[0])
	if m == nil {
		t.Fatalf("no failed batch report:\n%.500s", r.stderr)
	}
	n, _ := strconv.Atoi(m[1])
	checkFailedBatch(t, srv, r, in, failed, n)
	if len(lines(r.stderr)) != 2 {
		t.Errorf("stderr:\n%.1000s", r.stderr)
	}
}

// Chunks that finish out of order are still printed in input order.
func TestBatchOutOfOrderCompletion(t *testing.T) {
	srv := newServer(t)
	// The first request to arrive answers last.
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 300 * time.Millisecond})
	in := addrs(3500)
	r := batchCall(srv, strings.Join(in, "\n"), "--concurrency", "4").run(t)
	wantCode(t, r, 0)
	if got := ndjsonIPs(t, r.stdout); !slices.Equal(got, in) {
		t.Errorf("%d results, not in input order (first difference at %d)", len(got), firstDiff(got, in))
	}
}

// --concurrency bounds the chunks in flight (default 4), and is used.
func TestBatchConcurrencyBound(t *testing.T) {
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
			srv := newServer(t)
			var mu sync.Mutex
			inflight, most := 0, 0
			target, _ := url.Parse(srv.URL)
			target.Path = ""
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			proxy := &httputil.ReverseProxy{
				Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
				Transport: tr,
			}
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			defer front.Close()

			in := addrs(tt.n)
			c := batchCall(srv, strings.Join(in, "\n"), tt.flags...)
			c.args[1] = front.URL + "/api/v4"
			r := c.run(t)
			wantCode(t, r, 0, c.args...)
			if got := ndjsonIPs(t, r.stdout); !slices.Equal(got, in) {
				t.Errorf("results not in input order (first difference at %d)", firstDiff(got, in))
			}
			if most != tt.want {
				t.Errorf("at most %d batches in flight, want %d", most, tt.want)
			}
		})
	}
}

// Invalid lines are reported with their line numbers and written to
// --failed; blank and # lines are ignored; exit 2 when nothing else
// failed; the valid addresses are looked up.
func TestBatchInvalidLines(t *testing.T) {
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
	wantCode(t, r, exitUsage)
	want := []string{"1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "203.0.113.7"}
	if got := ndjsonIPs(t, r.stdout); !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	wantErr := []string{
		`synthient: line 5: "999.1.1.1" is not an IP address; not looked up`,
		`synthient: line 8: "example.com" is not an IP address; not looked up`,
		`synthient: line 9: "fe80::1%eth0" is not an IP address; not looked up`,
		`synthient: line 11: "1.2.3.4/24" is not an IP address; not looked up`,
		"synthient: 4 lines are not IP addresses (listed above and in the --failed file)",
	}
	got := lines(r.stderr)
	if !slices.Equal(got, wantErr) {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, strings.Join(wantErr, "\n"))
	}
	if got, want := readLines(t, failed), []string{"999.1.1.1", "example.com", "fe80::1%eth0", "1.2.3.4/24"}; !slices.Equal(got, want) {
		t.Errorf("--failed holds %q, want %q", got, want)
	}
	if n := srv.Arrivals(synthienttest.RouteLookupIPs); n != 1 {
		t.Errorf("%d batch requests, want 1", n)
	}
}

// Only comments and blank lines: nothing to do, nothing sent, exit 0.
func TestBatchNothingToLookUp(t *testing.T) {
	srv := newServer(t)
	r := batchCall(srv, "# nothing\n\n   \n#1.1.1.1\n").run(t)
	wantCode(t, r, 0)
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// Invalid lines and a failed batch: exit 3, and --failed holds both.
func TestBatchInvalidAndFailed(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 500})
	failed := filepath.Join(t.TempDir(), "failed.txt")
	r := batchCall(srv, "1.1.1.1\nnope\n8.8.8.8\n", "--failed", failed).run(t)
	wantCode(t, r, exitAPI)
	if r.stdout != "" {
		t.Errorf("stdout: %q", r.stdout)
	}
	got := readLines(t, failed)
	slices.Sort(got)
	if want := []string{"1.1.1.1", "8.8.8.8", "nope"}; !slices.Equal(got, want) {
		t.Errorf("--failed holds %q, want %q", got, want)
	}
	if !strings.Contains(r.stderr, "2 of 2 addresses were not looked up; 1 line is not an IP address") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// The failed-chunk report, text output, against its golden file.
func TestGoldenBatchFailureReport(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	failed := filepath.Join(t.TempDir(), "failed.txt")
	c := against(srv, "lookup", "ips", "--file", "-", "--failed", failed)
	c.stdin = strings.NewReader("203.0.113.7\n8.8.8.8\nnot-an-ip\n2606:4700:4700::1111\n")
	r := c.run(t)
	wantCode(t, r, exitAPI)
	golden(t, "lookup_ips_failed", "exit code "+strconv.Itoa(r.code)+"\n--- stdout\n"+r.stdout+"--- stderr\n"+normalise(r.stderr))
	if got, want := readLines(t, failed), []string{"not-an-ip", "203.0.113.7", "8.8.8.8", "2606:4700:4700::1111"}; !slices.Equal(got, want) {
		t.Errorf("--failed holds %q, want %q", got, want)
	}
}

// A response that lacks some results: those addresses are reported and
// written to --failed, the others printed in order; nothing is dropped.
func TestBatchPartialResponse(t *testing.T) {
	srv := newServer(t)
	drop := map[string]bool{"8.8.8.8": true, "2606:4700:4700::1111": true}
	target, _ := url.Parse(srv.URL)
	target.Path = ""
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: tr,
		ModifyResponse: func(resp *http.Response) error {
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
		},
	}
	front := httptest.NewServer(proxy)
	defer front.Close()

	failed := filepath.Join(t.TempDir(), "failed.txt")
	c := batchCall(srv, "1.1.1.1\n8.8.8.8\n203.0.113.7\n2606:4700:4700::1111\n9.9.9.9\n", "--failed", failed)
	c.args[1] = front.URL + "/api/v4"
	r := c.run(t)
	wantCode(t, r, exitAPI)
	if got, want := ndjsonIPs(t, r.stdout), []string{"1.1.1.1", "203.0.113.7", "9.9.9.9"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	m := failedBatchRe.FindStringSubmatch(lines(r.stderr)[0])
	if m == nil || m[1] != "1" || m[2] != "2" || m[4] != "8.8.8.8 2606:4700:4700::1111" {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if got, want := readLines(t, failed), []string{"8.8.8.8", "2606:4700:4700::1111"}; !slices.Equal(got, want) {
		t.Errorf("--failed holds %q, want %q", got, want)
	}
	if !strings.Contains(r.stderr, "2 of 5 addresses were not looked up") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// An interrupt while the addresses are still being read (an interactive
// stdin, a pipe that has not ended) stops the batch: exit 130, promptly.
func TestBatchInterruptWhileReading(t *testing.T) {
	srv := newServer(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := batchCall(srv, "")
	c.stdin, c.ctx = pr, ctx
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	if _, err := io.WriteString(pw, "1.1.1.1\n8.8.8.8\n"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case r := <-done:
		wantCode(t, r, exitInterrupt)
	case <-time.After(2 * time.Second):
		pw.Close() // let the command end, so the test does not leak it
		r := <-done
		t.Errorf("lookup ips --file - did not return within 2s of the interrupt while stdin was open; "+
			"it returned only once stdin ended (exit %d)", r.code)
	}
}

// An interrupt while a chunk is in flight exits 130 (not 3, as if the API
// had failed), and the addresses not looked up are still reported.
func TestBatchInterruptInFlight(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, -1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed := filepath.Join(t.TempDir(), "failed.txt")
	c := batchCall(srv, "1.1.1.1\n8.8.8.8\n", "--failed", failed)
	c.ctx = ctx
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	waitFor(t, func() bool { return srv.Arrivals(synthienttest.RouteLookupIPs) == 1 }, "the batch request")
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("lookup ips did not return within 10s of the interrupt")
	}
	if r.code != exitInterrupt {
		t.Errorf("exit code %d after an interrupt, want %d; stderr:\n%s", r.code, exitInterrupt, r.stderr)
	}
	if got, want := readLines(t, failed), []string{"1.1.1.1", "8.8.8.8"}; !slices.Equal(got, want) {
		t.Errorf("--failed holds %q, want %q", got, want)
	}
}

// A line too long to read (over the scanner's 1 MiB) must not make the
// addresses around it vanish: each is looked up or listed as not looked
// up, and the long line is reported with its number.
func TestBatchOverlongLine(t *testing.T) {
	srv := newServer(t)
	failed := filepath.Join(t.TempDir(), "failed.txt")
	input := "1.1.1.1\n8.8.8.8\n" + strings.Repeat("x", 2<<20) + "\n9.9.9.9\n"
	r := batchCall(srv, input, "--failed", failed).run(t)
	if r.code == 0 {
		t.Errorf("exit 0 with an unreadable line")
	}
	if !strings.Contains(r.stderr, "line 3") {
		t.Errorf("stderr does not name line 3:\n%.300s", r.stderr)
	}
	accounted := map[string]bool{}
	for _, ip := range ndjsonIPs(t, r.stdout) {
		accounted[ip] = true
	}
	for _, l := range readLines(t, failed) {
		accounted[l] = true
	}
	for _, ip := range []string{"1.1.1.1", "8.8.8.8", "9.9.9.9"} {
		if !accounted[ip] {
			t.Errorf("%s was neither looked up nor listed in --failed (exit %d, stderr %.300q)", ip, r.code, r.stderr)
		}
	}
}
