package lookup_test

// Tests of ips.go: a bulk lookup interrupted (Ctrl-C, SIGTERM) accounts
// for every address it read, and says why it stopped.

import (
	"context"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Ctrl-C once the first 100 results are printed, with batches read and
// not sent: every address read is printed or in a file, the summary's
// counts add up to the lines read, and the line the run stopped after is
// named; the lines after it are in no output; two reports of failed
// addresses on adjacent lines never say the same.
func TestBatchInterruptAccountsEveryAddress(t *testing.T) {
	t.Parallel()
	for _, concurrency := range []string{"1", "4"} {
		t.Run(concurrency, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &clitest.CancelAfter{N: 100, Cancel: cancel}
			in := clitest.Addrs(5000)
			failed, unknown, files := clitest.OutFiles(t)
			c := clitest.BatchCall(srv, strings.Join(in, "\n")+"\n", append(files, "--concurrency", concurrency, "--batch-size", "100")...)
			c.Ctx, c.StdoutTo = ctx, out
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Interrupt)
			m := regexp.MustCompile(`stopped after line (\d+) of the input`).FindStringSubmatch(r.Stderr)
			require.NotNil(t, m, "stderr does not name the last line read:\n%.2000s", r.Stderr)
			read, _ := strconv.Atoi(m[1])
			require.Less(t, read, 5000, "the whole input was read")
			s := clitest.ParseSummary(t, r.Stderr)
			assert.Equal(t, int64(read), s.Read, "the addresses the summary counts")
			rows, nf, nu := clitest.NDJSONIPs(t, out.String()), clitest.FileLines(t, failed), clitest.FileLines(t, unknown)
			assert.GreaterOrEqual(t, len(rows), 100, "results printed")
			assert.Equal(t, []int64{s.LookedUp, s.NotSent + s.Rejected, s.Unknown}, []int64{int64(len(rows)), int64(len(nf)), int64(len(nu))},
				"looked up, --failed, --unknown")
			all := append(append(slices.Clone(rows), nf...), nu...)
			slices.SortFunc(all, func(a, b string) int { return strings.Compare(a, b) })
			want := slices.Clone(in[:read])
			slices.Sort(want)
			clitest.AssertAddrs(t, want, all, "every address read, printed or in a file, once")
			// Two reports of adjacent lines never say the same: one line
			// reports a run of addresses of one outcome and one cause.
			report := regexp.MustCompile(`(?m)^synthient: lines? ([0-9]+)(?:-([0-9]+))?: [0-9]+ address(?:es)? (.*)$`)
			said := report.FindAllStringSubmatch(r.Stderr, -1)
			for i := 1; i < len(said); i++ {
				last := said[i-1][2]
				if last == "" {
					last = said[i-1][1]
				}
				if n, _ := strconv.Atoi(last); strconv.Itoa(n+1) == said[i][1] {
					assert.NotEqual(t, said[i-1][3], said[i][3], "two reports of adjacent lines say the same:\n%.3000s", r.Stderr)
				}
			}
		})
	}
}

// An interrupt while a request is in flight exits 130 (not 3, as if the
// API had failed), and its addresses are reported: possibly charged, in
// --unknown, since the request may have reached the API.
func TestBatchInterruptInFlight(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIPs, -1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed, unknown, files := clitest.OutFiles(t)
	c := clitest.BatchCall(srv, "1.1.1.1\n8.8.8.8\n", files...)
	c.Ctx = ctx
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	require.Eventually(t, func() bool { return srv.Arrivals(synthienttest.RouteLookupIPs) == 1 }, 2*time.Minute, 10*time.Millisecond, "the batch request")
	cancel()
	var r clitest.Result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "lookup ips did not return within 2 minutes of the interrupt")
	}
	assert.Equal(t, clierr.Interrupt, r.Code, "exit code after an interrupt; stderr:\n%s", r.Stderr)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, clitest.ReadLines(t, unknown), "--unknown")
	assert.Empty(t, clitest.ReadLines(t, failed), "--failed")
	assert.Equal(t, int64(2), clitest.ParseSummary(t, r.Stderr).Unknown, "unknown")
	assert.Contains(t, r.Stderr, "synthient: lines 1-2: 2 addresses possibly charged (the request may have been processed); do not resend blindly (in --unknown "+
		unknown+"): interrupted (Ctrl-C or SIGTERM)\n")
	assert.NotContains(t, r.Stderr, "context canceled")
}

// Ctrl-C while addresses are typed at a terminal (lookup ip -), before
// the input ended: the addresses typed are not sent, and reported so,
// with the interrupt as the reason, not "context canceled"; exit 130.
func TestBatchInterruptWhileTyping(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	typed, typing := io.Pipe()
	c := clitest.Against(srv, "-o", "json", "lookup", "ip", "-")
	c.Ctx, c.Stdin, c.TTYIn, c.Stderr = ctx, typed, true, &clitest.SyncBuffer{}
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	// Two lines in one read: once the first is reported, the second is
	// read too, and waits in the command for more to fill a request.
	_, err := typing.Write([]byte("nope\n8.8.8.8\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(c.Stderr.String(), `line 1: "nope" is not an IP address`) },
		clitest.HangBound, 10*time.Millisecond, "the first line read")
	cancel()
	var r clitest.Result
	select {
	case r = <-done:
	case <-time.After(clitest.HangBound):
		require.FailNow(t, "lookup ip - did not return after the interrupt")
	}
	require.NoError(t, typing.Close()) // ends the read the command abandoned
	clitest.RequireCode(t, r, clierr.Interrupt)
	assert.Contains(t, r.Stderr, "synthient: line 2: 1 address not sent, safe to send again: interrupted (Ctrl-C or SIGTERM)\n")
	assert.NotContains(t, r.Stderr, "context canceled")
	assert.True(t, strings.HasSuffix(r.Stderr, "synthient: interrupted\n"), "stderr:\n%s", r.Stderr)
	assert.Empty(t, srv.Requests(), "requests sent")
}
