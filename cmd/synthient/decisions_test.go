package main

// Tests of decisions.go: -v, the retry decisions on stderr.

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient/synthienttest"
)

// -v logs each retry decision on stderr as one line, and never the key.
func TestVerbose(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// A success.
	r := runSrv(t, srv, "-v", "lookup", "ip", "1.1.1.1")
	requireCode(t, r, 0)
	ls := lines(r.stderr)
	if assert.Len(t, ls, 1, "-v stderr lines") {
		assert.Regexp(t, `^attempt 1/3 GET /lookup/ip/\{ip\}: 200, request id `+requestIDRe.String()+` -> done$`, ls[0], "-v stderr")
	}
	assert.Contains(t, r.stdout, "1.1.1.1", "stdout")

	// --max-retries sets the attempts shown; a refused retry shows why.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r = runSrv(t, srv, "--verbose", "--max-retries", "5", "lookup", "ip", "1.1.1.1")
	requireCode(t, r, exitAPI)
	assert.Regexp(t, `(?m)^attempt 1/6 GET /lookup/ip/\{ip\}: 503, request id \S+ -> stop: may_have_been_processed$`, r.stderr, "-v stderr")

	// A retried 502 on the account (waits a real backoff of about 1s).
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	r = runSrv(t, srv, "-v", "account")
	requireCode(t, r, 0)
	ls = lines(r.stderr)
	if assert.Len(t, ls, 2, "-v stderr lines") {
		assert.Regexp(t, `^attempt 1/3 GET /account/me: 502, request id \S+ -> retry in [0-9.]+m?s$`, ls[0], "-v stderr")
		assert.Regexp(t, `^attempt 2/3 GET /account/me: 200, request id \S+ -> done$`, ls[1], "-v stderr")
	}

	// Nothing on stderr without -v.
	r = runSrv(t, srv, "account")
	requireCode(t, r, 0)
	assert.Empty(t, r.stderr, "stderr without -v")
}
