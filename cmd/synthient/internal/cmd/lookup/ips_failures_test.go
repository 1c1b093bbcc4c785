package lookup_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

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
			srv := clitest.NewServer(t)
			srv.Inject(synthienttest.RouteLookupIPs, 1, clitest.PassThrough)
			srv.Inject(synthienttest.RouteLookupIPs, 1, tt.fault)
			in := clitest.Addrs(2500)
			failed, unknown, files := clitest.OutFiles(t)
			r := clitest.BatchCall(srv, strings.Join(in, "\n"), append(files, "--concurrency", tt.concurrency)...).Run(t)
			clitest.RequireCode(t, r, clierr.API)
			assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "batch requests (the failed one is not sent again)")

			gs := clitest.Groups(r.Stderr)
			require.Len(t, gs, 1, "want one report of the failed request:\n%.1000s", r.Stderr)
			first, _ := strconv.Atoi(gs[0][1])
			lo := first - 1
			hi := min(lo+1000, 2500)
			require.Zero(t, lo%1000, "the report names lines %s-%s, not a whole batch", gs[0][1], gs[0][2])
			assert.Equal(t, []string{strconv.Itoa(hi), strconv.Itoa(hi - lo)}, gs[0][2:4], "the report's last line and count")
			batch, rest := in[lo:hi], append(slices.Clone(in[:lo]), in[hi:]...)
			clitest.AssertAddrs(t, rest, clitest.NDJSONIPs(t, r.Stdout), "stdout: the other results in input order")
			s := clitest.ParseSummary(t, r.Stderr)
			if tt.unknown {
				assert.Contains(t, gs[0][4], "possibly charged", "the report")
				assert.Contains(t, gs[0][4], "do not resend blindly (in --unknown "+unknown+")", "the report")
				clitest.AssertAddrs(t, batch, clitest.ReadLines(t, unknown), "--unknown")
				assert.Empty(t, clitest.ReadLines(t, failed), "--failed")
				assert.Equal(t, int64(hi-lo), s.Unknown, "unknown")
				assert.Equal(t, int64((9*(hi-lo)+9)/10), s.MaybeCredits, "credits possibly spent")
				assert.NotContains(t, r.Stderr, "not looked up", "stderr")
			} else {
				assert.Contains(t, gs[0][4], "rejected without a charge", "the report")
				clitest.AssertAddrs(t, batch, clitest.ReadLines(t, failed), "--failed")
				assert.Empty(t, clitest.ReadLines(t, unknown), "--unknown")
				assert.Equal(t, int64(hi-lo), s.Rejected, "rejected")
			}
			assert.Equal(t, synthienttest.DefaultCredits-srv.Credits(srv.APIKey), s.Credits, "credits spent: the fake's charge")
		})
	}
}

// Credits for 2 of 5 batches, one in flight: the third request is answered
// 402 and nothing more is sent; the rest of the input is still read and
// counted as not sent; --failed holds every address of the 402 and after,
// safe to send again.
func TestBatchCreditsRunOut(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t, synthienttest.WithCredits(2*9))
	in := clitest.Addrs(50)
	failed, unknown, files := clitest.OutFiles(t)
	r := clitest.BatchCall(srv, strings.Join(in, "\n"), append(files, "--concurrency", "1", "--batch-size", "10")...).Run(t)
	clitest.RequireCode(t, r, clierr.API)
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "requests sent")
	clitest.AssertAddrs(t, in[:20], clitest.NDJSONIPs(t, r.Stdout), "results")
	clitest.AssertAddrs(t, in[20:], clitest.ReadLines(t, failed), "--failed")
	assert.Empty(t, clitest.ReadLines(t, unknown), "--unknown")
	assert.Equal(t, clitest.Summary{Read: 50, LookedUp: 20, Rejected: 10, NotSent: 20, Credits: 18}, clitest.ParseSummary(t, r.Stderr), "summary")
	gs := clitest.Groups(r.Stderr)
	require.Len(t, gs, 2, "reports:\n%s", r.Stderr)
	assert.Equal(t, []string{"21", "30", "10"}, gs[0][1:4], "the rejected request")
	assert.Contains(t, gs[0][5], "402 Payment Required", "the rejected request")
	assert.Equal(t, []string{"31", "50", "20"}, gs[1][1:4], "the addresses not sent")
	assert.Contains(t, gs[1][4], "not sent, safe to send again (in --failed "+failed+")", "the addresses not sent")
	assert.Equal(t, int64(0), srv.Credits(srv.APIKey), "credits left")
}

// Invalid lines and a failed request: exit 3 (the API's failure comes
// first), the invalid line in no file, the request's addresses in
// --unknown.
func TestBatchInvalidAndFailed(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 500})
	failed, unknown, files := clitest.OutFiles(t)
	r := clitest.BatchCall(srv, "1.1.1.1\nnope\n8.8.8.8\n", files...).Run(t)
	clitest.RequireCode(t, r, clierr.API)
	assert.Empty(t, r.Stdout, "stdout")
	assert.Empty(t, clitest.ReadLines(t, failed), "--failed")
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, clitest.ReadLines(t, unknown), "--unknown")
	assert.Equal(t, clitest.Summary{Read: 3, Invalid: 1, Unknown: 2, MaybeCredits: 2}, clitest.ParseSummary(t, r.Stderr), "summary")
	assert.Contains(t, r.Stderr, "2 addresses possibly charged, do not resend blindly (in --unknown "+unknown+"); 1 line is not an IP address", "stderr")
}

// A response that lacks some results: the API did the work, so those
// addresses are possibly charged and go to --unknown; the others are
// printed in order; nothing is dropped.
func TestBatchPartialResponse(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	drop := map[string]bool{"8.8.8.8": true, "2606:4700:4700::1111": true}
	base := clitest.ServeFront(t, clitest.ProxyTo(t, srv, func(resp *http.Response) error {
		if resp.Request.URL.Path != "/api/v4/lookup/ips" || resp.StatusCode != 200 {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close() // read to its end, or failed: Close says nothing more
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

	failed, unknown, files := clitest.OutFiles(t)
	c := clitest.BatchCall(srv, "1.1.1.1\n8.8.8.8\n203.0.113.7\n2606:4700:4700::1111\n9.9.9.9\n", files...)
	c.Args[1] = base
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.API)
	assert.Equal(t, []string{"1.1.1.1", "203.0.113.7", "9.9.9.9"}, clitest.NDJSONIPs(t, r.Stdout), "results")
	assert.Equal(t, []string{"8.8.8.8", "2606:4700:4700::1111"}, clitest.ReadLines(t, unknown), "--unknown")
	assert.Empty(t, clitest.ReadLines(t, failed), "--failed")
	s := clitest.ParseSummary(t, r.Stderr)
	assert.Equal(t, int64(3), s.LookedUp, "looked up")
	assert.Equal(t, int64(2), s.Unknown, "unknown")
	assert.Equal(t, synthienttest.DefaultCredits-srv.Credits(srv.APIKey), s.Credits+s.MaybeCredits, "credits: the fake's charge")
}

// inputFile writes text to in.txt of a new directory, dir, which has a
// directory sub too.
func inputFile(t *testing.T, text string) (dir, in string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	in = filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(in, []byte(text), 0o600))
	return dir, in
}

// inputCall is lookup ips of the input file in, with flags: --file in,
// or, with stdin set, --file - and stdin read from in.
func inputCall(t *testing.T, srv *synthienttest.Server, in string, stdin bool, flags ...string) clitest.Call {
	t.Helper()
	if !stdin {
		return clitest.Against(srv, append([]string{"lookup", "ips", "--file", in}, flags...)...)
	}
	c := clitest.Against(srv, append([]string{"lookup", "ips", "--file", "-"}, flags...)...)
	f, err := os.Open(in) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() }) // opened read-only: closing it loses nothing
	c.Stdin = f
	return c
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
			srv := clitest.NewServer(t)
			dir, in := inputFile(t, input)
			out := tt.path(t, in)
			want := tt.flag + " " + out + " is the input file"
			flags := []string{tt.flag, out}
			if tt.want != "" { // --unknown: the same file by another path
				flags, want = append(flags, "--unknown", filepath.Join(dir, "sub", "..", "sub", "out.txt")), tt.want
			}
			c := inputCall(t, srv, in, tt.stdin, flags...)
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, c.Args...)
			assert.Contains(t, r.Stderr, want, "stderr")
			b, err := os.ReadFile(in) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err, "the input")
			assert.Equal(t, input, string(b), "the input")
			assert.Empty(t, srv.Requests(), "requests sent")
			assert.Empty(t, r.Stdout, "stdout")
		})
	}
}

// An output file that cannot be created is a usage error before anything
// is sent, and the other one keeps what it held: neither is emptied until
// both are open.
func TestBatchListNotCreatable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		flags func(kept, missing string) []string
	}{
		{"--unknown", func(kept, missing string) []string { return []string{"--failed", kept, "--unknown", missing} }},
		{"--failed", func(kept, missing string) []string { return []string{"--failed", missing, "--unknown", kept} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			kept := filepath.Join(dir, "kept.txt")
			missing := filepath.Join(dir, "no-such-dir", "out.txt")
			require.NoError(t, os.WriteFile(kept, []byte("9.9.9.9\n"), 0o600))
			srv := clitest.NewServer(t)
			c := clitest.Against(srv, append([]string{"lookup", "ips", "--file", "-"}, tt.flags(kept, missing)...)...)
			c.Stdin = strings.NewReader("1.1.1.1\n")
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, c.Args...)
			assert.Contains(t, r.Stderr, tt.name+":")
			got, err := os.ReadFile(kept) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			assert.Equal(t, "9.9.9.9\n", string(got), "the other file keeps what it held")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs), "lookups sent")
		})
	}
}

// A stdout whose reader is gone (EPIPE: a pipe into head that exited)
// stops the run before another request is sent: with the pipe's reader
// closed before the run, the fake charges the first request only (the
// text table is written out before the next request goes, not after its
// answer), in every output format. The command ends with 141, SIGPIPE's
// status, printing no error; the summary accounts for every address.
func TestBatchClosedStdout(t *testing.T) {
	t.Parallel()
	in := strings.Join(clitest.Addrs(200), "\n") + "\n"
	for _, output := range []string{"text", "csv", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			credits := srv.Credits(srv.APIKey)
			c := clitest.BatchCall(srv, in, "--batch-size", "10", "--concurrency", "1")
			c.Args[3], c.StdoutTo = output, clitest.ClosedPipe(t) // -o output
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.BrokenPipe, c.Args...)
			assert.Equal(t, int64(9), credits-srv.Credits(srv.APIKey), "credits charged: the first request's 9\nstderr:\n%s", r.Stderr)
			assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
			assert.NotContains(t, r.Stderr, "broken pipe")
			s := clitest.ParseSummary(t, r.Stderr)
			assert.Equal(t, int64(9), s.Credits, "the summary's credits spent")
			assert.Zero(t, s.Unknown, "possibly charged")
			assert.Contains(t, r.Stderr, "not sent, safe to send again: stdout was closed by its reader")
		})
	}
}
