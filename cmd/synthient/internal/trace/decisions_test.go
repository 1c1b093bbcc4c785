package trace_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of decisions.go: -v, the retry decisions on stderr.

// -v logs each retry decision on stderr as one line, and never the key.
func TestVerbose(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	// A success.
	r := clitest.RunSrv(t, srv, "-v", "lookup", "ip", "1.1.1.1")
	clitest.RequireCode(t, r, 0)
	ls := clitest.Lines(r.Stderr)
	if assert.Len(t, ls, 1, "-v stderr lines") {
		assert.Regexp(t, `^attempt 1/3 GET /lookup/ip/\{ip\}: 200, request id `+clitest.RequestIDRe.String()+` -> done$`, ls[0], "-v stderr")
	}
	assert.Contains(t, r.Stdout, "1.1.1.1", "stdout")

	// --max-retries sets the attempts shown; a refused retry shows why.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r = clitest.RunSrv(t, srv, "--verbose", "--max-retries", "5", "lookup", "ip", "1.1.1.1")
	clitest.RequireCode(t, r, clierr.API)
	assert.Regexp(t, `(?m)^attempt 1/6 GET /lookup/ip/\{ip\}: 503, request id \S+ -> stop: may_have_been_processed$`, r.Stderr, "-v stderr")

	// A retried 502 on the account (waits a real backoff of about 1s).
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	r = clitest.RunSrv(t, srv, "-v", "account")
	clitest.RequireCode(t, r, 0)
	ls = clitest.Lines(r.Stderr)
	if assert.Len(t, ls, 2, "-v stderr lines") {
		assert.Regexp(t, `^attempt 1/3 GET /account/me: 502, request id \S+ -> retry in [0-9.]+m?s$`, ls[0], "-v stderr")
		assert.Regexp(t, `^attempt 2/3 GET /account/me: 200, request id \S+ -> done$`, ls[1], "-v stderr")
	}

	// Nothing on stderr without -v.
	r = clitest.RunSrv(t, srv, "account")
	clitest.RequireCode(t, r, 0)
	assert.Empty(t, r.Stderr, "stderr without -v")
}

// -v prints each pacing hold as --trace does ("hold 8ms before attempt 1
// (lookup rate limit)"), one line per hold: the same lines, as many, in
// one run with both.
func TestVerboseHolds(t *testing.T) {
	t.Parallel()
	// A real clock, and a lookup limit that a run of 40 requests passes:
	// pacing holds them.
	srv := synthienttest.NewServer(synthienttest.WithRateLimit(synthienttest.BucketLookup, 20, 20))
	t.Cleanup(srv.Close)
	c := clitest.BatchCall(srv, strings.Join(clitest.Addrs(40), "\n")+"\n", "--batch-size", "1", "--concurrency", "4")
	c.Args = append([]string{"-v", "--trace", "--quiet"}, c.Args...)
	r := c.Run(t)
	clitest.RequireCode(t, r, 0)
	verbose := regexp.MustCompile(`^(attempt \d+/\d+ POST /lookup/ips: \d+, request id \S+ -> \w+.*|hold [0-9.]+[µm]?s before attempt \d+ \(lookup rate limit\)(: stop, \w+)?)$`)
	var vHolds, traceHolds []string
	for _, l := range clitest.Lines(r.Stderr) {
		switch {
		case strings.HasPrefix(l, "  hold "):
			traceHolds = append(traceHolds, strings.TrimPrefix(l, "  "))
		case strings.HasPrefix(l, "trace "), strings.HasPrefix(l, "  "):
		default:
			require.Regexp(t, verbose, l, "a line of -v")
			if strings.HasPrefix(l, "hold ") {
				vHolds = append(vHolds, l)
			}
		}
	}
	require.NotEmpty(t, traceHolds, "no hold in the run: stderr:\n%s", r.Stderr)
	assert.ElementsMatch(t, traceHolds, vHolds, "the holds of -v and of --trace")
}
