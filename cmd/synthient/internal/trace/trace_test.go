package trace_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/trace"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of trace.go: --trace, the tree of each call on stderr.

// fakeClock is a clock that a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func (c *fakeClock) request(tr *trace.Tracer, ctx context.Context, s synthient.RequestStart, took time.Duration, e synthient.RequestEnd) {
	rctx := tr.StartRequest(ctx, s)
	c.advance(took)
	tr.EndRequest(rctx, e)
}

// TestTracerTree: the tree of a call, as the tracer prints it when the call
// ends, for each kind of node; on a clock moved by hand.
func TestTracerTree(t *testing.T) {
	t.Parallel()
	lookup := synthient.RequestStart{Method: "GET", URL: "http://api.test/api/v4/lookup/ip/1.1.1.1", Route: "/lookup/ip/{ip}", Attempt: 1}
	for _, tc := range []struct {
		name  string
		start synthient.CallStart
		run   func(c *fakeClock, tr *trace.Tracer, ctx context.Context) synthient.CallEnd
		want  string
	}{
		{
			name:  "a 429 waited out",
			start: synthient.CallStart{Operation: "LookupIP", Class: retry.Billed},
			run: func(c *fakeClock, tr *trace.Tracer, ctx context.Context) synthient.CallEnd {
				c.request(tr, ctx, lookup, 2*time.Millisecond, synthient.RequestEnd{Status: 429, RequestID: "req-1",
					Decision: retry.Decision{Retry: true, Wait: time.Second, RetryAfter: time.Second, HasRetryAfter: true}})
				c.advance(time.Second)
				second := lookup
				second.Attempt = 2
				c.request(tr, ctx, second, time.Millisecond, synthient.RequestEnd{Status: 200, RequestID: "req-2"})
				return synthient.CallEnd{Attempts: 2, RequestID: "req-2"}
			},
			want: "trace LookupIP (billed): ok, 2 attempts in 1.003s\n" +
				"  attempt 1: GET /lookup/ip/{ip} -> 429 in 2ms, request id req-1: retry\n" +
				"  wait 1s (Retry-After 1s)\n" +
				"  attempt 2: GET /lookup/ip/{ip} -> 200 in 1ms, request id req-2: done\n",
		},
		{
			name:  "a stop after a backoff",
			start: synthient.CallStart{Operation: "Account", Class: retry.Standard},
			run: func(c *fakeClock, tr *trace.Tracer, ctx context.Context) synthient.CallEnd {
				account := synthient.RequestStart{Method: "GET", Route: "/account/me", Attempt: 1}
				c.request(tr, ctx, account, 300*time.Microsecond, synthient.RequestEnd{ErrorKind: "timeout",
					Decision: retry.Decision{Retry: true, Wait: 750 * time.Millisecond}})
				c.advance(750 * time.Millisecond)
				account.Attempt = 2
				c.request(tr, ctx, account, time.Millisecond, synthient.RequestEnd{Status: 503,
					Decision: retry.Decision{Reason: retry.AttemptsExhausted}})
				return synthient.CallEnd{Err: errors.New("synthient: Account: 503\nService Unavailable"), Attempts: 2, StopReason: retry.AttemptsExhausted}
			},
			want: "trace Account (standard): error: synthient: Account: 503 Service Unavailable (attempts_exhausted), 2 attempts in 751ms\n" +
				"  attempt 1: GET /account/me -> timeout error in 300µs: retry\n" +
				"  wait 750ms (backoff)\n" +
				"  attempt 2: GET /account/me -> 503 in 1ms: stop, attempts_exhausted\n",
		},
		{
			name:  "holds",
			start: synthient.CallStart{Operation: "LookupIP", Class: retry.Billed},
			run: func(c *fakeClock, tr *trace.Tracer, ctx context.Context) synthient.CallEnd {
				tr.Hold(ctx, synthient.PacingHold{Bucket: "lookup", Attempt: 1, Wait: 1500 * time.Millisecond})
				c.advance(1500 * time.Millisecond)
				c.request(tr, ctx, lookup, time.Millisecond, synthient.RequestEnd{Status: 200})
				tr.Hold(ctx, synthient.PacingHold{Bucket: "lookup", Attempt: 2, Wait: 2 * time.Second, Stop: retry.PacingExceedsDeadline})
				return synthient.CallEnd{Err: errors.New("held"), Attempts: 1, StopReason: retry.PacingExceedsDeadline}
			},
			want: "trace LookupIP (billed): error: held (pacing_exceeds_deadline), 1 attempt in 1.501s\n" +
				"  hold 1.5s before attempt 1 (lookup rate limit)\n" +
				"  attempt 1: GET /lookup/ip/{ip} -> 200 in 1ms: done\n" +
				"  hold 2s before attempt 2 (lookup rate limit): stop, pacing_exceeds_deadline\n",
		},
		{
			name:  "a download",
			start: synthient.CallStart{Operation: "DownloadExport", Class: retry.Standard},
			run: func(c *fakeClock, tr *trace.Tracer, ctx context.Context) synthient.CallEnd {
				c.request(tr, ctx, synthient.RequestStart{Method: "GET", Route: "/feeds/{feed}/export/{id}", Attempt: 1}, time.Millisecond,
					synthient.RequestEnd{Status: 307})
				c.request(tr, ctx, synthient.RequestStart{Method: "GET", URL: "https://storage.test/b/x.parquet", Attempt: 1, Storage: true}, 4*time.Millisecond,
					synthient.RequestEnd{Status: 200, RequestID: "s\x1b]0;x\x07\nid"})
				return synthient.CallEnd{Attempts: 2, Bytes: 4096}
			},
			// Two legs of one attempt each: two requests, not "2 attempts".
			want: "trace DownloadExport (standard): ok, 2 requests in 5ms, 4096 bytes downloaded\n" +
				"  attempt 1: GET /feeds/{feed}/export/{id} -> 307 in 1ms: done\n" +
				"  attempt 1: GET storage https://storage.test/b/x.parquet -> 200 in 4ms, request id s\\x1b]0;x\\x07\\x0aid: done\n",
		},
		{
			name:  "nothing sent",
			start: synthient.CallStart{Operation: "LookupIP", Class: retry.Billed},
			run: func(*fakeClock, *trace.Tracer, context.Context) synthient.CallEnd {
				return synthient.CallEnd{Err: errors.New("invalid argument")}
			},
			want: "trace LookupIP (billed): error: invalid argument, 0 attempts in 0s\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			clock := &fakeClock{t: clitest.TestNow}
			tr := trace.New(&out)
			tr.SetClock(clock.now)
			ctx := tr.StartCall(context.Background(), tc.start)
			end := tc.run(clock, tr, ctx)
			assert.Empty(t, out.String(), "printed before the call ended")
			tr.EndCall(ctx, end)
			assert.Equal(t, tc.want, out.String())
		})
	}
}

// traceLine is a line of --trace: a call's, or an indented node's.
var traceLine = regexp.MustCompile(`^(trace [A-Za-z]+ \((billed|standard)\): .* in [0-9.]+[µm]?s.*|  (attempt|wait|hold) .*)$`)

// TestTraceFlag: --trace prints each call's tree on stderr, and nothing
// without it; stdout is the same either way.
func TestTraceFlag(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	plain := clitest.RunSrv(t, srv, "lookup", "ip", "1.1.1.1")
	clitest.RequireCode(t, plain, 0)
	assert.Empty(t, plain.Stderr)

	r := clitest.RunSrv(t, srv, "--trace", "lookup", "ip", "1.1.1.1")
	clitest.RequireCode(t, r, 0)
	assert.Equal(t, plain.Stdout, r.Stdout, "stdout with --trace")
	ls := clitest.Lines(r.Stderr)
	require.Len(t, ls, 2, "stderr:\n%s", r.Stderr)
	assert.Regexp(t, `^trace LookupIP \(billed\): ok, 1 attempt in [0-9.]+[µm]?s$`, ls[0])
	assert.Regexp(t, `^  attempt 1: GET /lookup/ip/\{ip\} -> 200 in [0-9.]+[µm]?s, request id `+clitest.RequestIDRe.String()+`: done$`, ls[1])

	// A billed 503 stops at once, and says why.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r = clitest.RunSrv(t, srv, "--trace", "lookup", "ip", "1.1.1.1")
	clitest.RequireCode(t, r, clierr.API)
	assert.Regexp(t, `(?m)^trace LookupIP \(billed\): error: 503 Service Unavailable \(may_have_been_processed\), 1 attempt in `, r.Stderr)
	assert.Regexp(t, `(?m)^  attempt 1: GET /lookup/ip/\{ip\} -> 503 in .*: stop, may_have_been_processed$`, r.Stderr)

	// A download: the meta, the API's 307 and the storage host, whose URL
	// is printed without its presigned query.
	r = clitest.RunSrv(t, srv, "--trace", "exports", "download", "proxies", "2026-06-09", "--out", t.TempDir()+"/x.parquet")
	clitest.RequireCode(t, r, 0)
	assert.Regexp(t, `(?m)^  attempt 1: GET storage `+regexp.QuoteMeta(srv.StorageURL)+`/synthient-exports/proxies/2026-06-09.parquet -> 200 `, r.Stderr)
	assert.NotContains(t, r.Stderr, "X-Amz-", "the presigned query")
}

// TestTraceFlagConcurrentCalls: the calls of lookup ips run at once, and
// each call's tree is printed whole.
func TestTraceFlagConcurrentCalls(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	c := clitest.BatchCall(srv, strings.Join(clitest.Addrs(40), "\n")+"\n", "--batch-size", "5", "--concurrency", "4")
	c.Args = append([]string{"--trace", "--quiet"}, c.Args...)
	r := c.Run(t)
	clitest.RequireCode(t, r, 0)
	calls := 0
	for i, l := range clitest.Lines(r.Stderr) {
		require.Regexp(t, traceLine, l)
		if strings.HasPrefix(l, "trace ") {
			calls++
			require.Less(t, i+1, len(clitest.Lines(r.Stderr)))
			assert.Regexp(t, `^  attempt 1: POST /lookup/ips -> 200`, clitest.Lines(r.Stderr)[i+1], "the line after a call's")
		}
	}
	assert.Equal(t, 8, calls, "LookupIPs calls traced")
}

// TestTraceFlagHostileServer: what a hostile server sends reaches the
// trace escaped.
func TestTraceFlagHostileServer(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	front := clitest.HostileFront(t, srv)
	r := clitest.Call{Args: []string{"--base-url", front, "--trace", "account"}, Env: clitest.KeyEnv(srv)}.Run(t)
	clitest.RequireCode(t, r, 0)
	clitest.CheckTerminalSafe(t, "stderr", r.Stderr)
	assert.Contains(t, r.Stderr, `request id req\u009b2J\x9b2J: done`, "the hostile request id, escaped")
}

// TestTraceFlagRefused: a command that calls nothing, or makes its own
// client, refuses --trace.
func TestTraceFlagRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--trace", "version"}, {"--trace", "demo"}, {"--trace", "fake-server"}} {
		r := clitest.RunArgs(t, nil, args...)
		clitest.RequireCode(t, r, clierr.Usage, args...)
		assert.Contains(t, r.Stderr, "--trace does not apply to "+args[1])
	}
}
