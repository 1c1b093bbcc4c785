package mcp_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of lookup.go and domain.go: lookup_ip and lookup_domain, their
// credits, the cache and request sharing across sessions, and bulk
// outcomes.

// One cache serves every session: a second session's repeat of a lookup
// is free and says how old its answer is; the fake took one credit each.
func TestCacheAcrossSessions(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	h := startHTTP(t, srv)
	first, second := h.connect(t, nil), h.connect(t, nil)

	res := call(t, first, "lookup_ip", ips("1.1.1.1"))
	out := output[lookupIPOut](t, res)
	require.Equal(t, "looked_up", out.Results[0].Outcome, "%s", text(res))
	assert.False(t, out.Results[0].Cached)
	assert.Nil(t, out.Results[0].CacheAgeSeconds)
	assert.Equal(t, int64(1), out.CreditsSpent)

	res = call(t, second, "lookup_ip", ips("1.1.1.1"))
	out = output[lookupIPOut](t, res)
	require.Equal(t, "looked_up", out.Results[0].Outcome, "%s", text(res))
	assert.True(t, out.Results[0].Cached, "the second session's repeat")
	require.NotNil(t, out.Results[0].CacheAgeSeconds)
	assert.GreaterOrEqual(t, *out.Results[0].CacheAgeSeconds, int64(0))
	assert.Equal(t, int64(0), out.CreditsSpent)
	assert.Contains(t, text(res), "Answer: from the cache, ")

	domain := map[string]any{"domain": "example.org"}
	res = call(t, first, "lookup_domain", domain)
	assert.Equal(t, int64(1), output[credits](t, res).CreditsSpent, "%s", text(res))
	res = call(t, second, "lookup_domain", domain)
	d := output[struct {
		Cached          bool
		CacheAgeSeconds *int64 `json:"cache_age_seconds"`
		credits
	}](t, res)
	assert.True(t, d.Cached)
	assert.NotNil(t, d.CacheAgeSeconds)
	assert.Equal(t, int64(0), d.CreditsSpent)

	// A bulk lookup takes what the cache has, and pays for the rest.
	res = call(t, second, "lookup_ip", ips("1.1.1.1", "8.8.4.4"))
	out = output[lookupIPOut](t, res)
	assert.True(t, out.Results[0].Cached)
	assert.False(t, out.Results[1].Cached)
	assert.Equal(t, int64(1), out.CreditsSpent)
	assert.Equal(t, int64(3), spent(srv), "credits the fake took")
}

// 32 identical lookups at once from 4 sessions cost 1 credit: the first
// sends the request, the others share it or find its answer in the cache.
func TestIdenticalLookupsCostOneCredit(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	h := startHTTP(t, srv)
	var sessions []*gomcp.ClientSession
	for range 4 {
		sessions = append(sessions, h.connect(t, nil))
	}
	var wg sync.WaitGroup
	results := make(chan *gomcp.CallToolResult, 32)
	for _, cs := range sessions {
		for range 8 {
			wg.Go(func() {
				res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: "lookup_ip", Arguments: ips("9.9.9.9")})
				if assert.NoError(t, err) {
					results <- res
				}
			})
		}
	}
	wg.Wait()
	close(results)
	var total int64
	var n, fresh int
	for res := range results {
		checkResult(t, sessions[0], "lookup_ip", res)
		out := output[lookupIPOut](t, res)
		require.Equal(t, "looked_up", out.Results[0].Outcome, "%s", text(res))
		total += out.CreditsSpent
		if !out.Results[0].Cached && !out.Results[0].Shared {
			fresh++
		}
		n++
	}
	assert.Equal(t, 32, n, "results")
	assert.Equal(t, 1, fresh, "answers neither cached nor shared")
	assert.Equal(t, int64(1), total, "credits the results say were spent")
	assert.Equal(t, int64(1), spent(srv), "credits the fake took")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "requests the fake got")
}

// Many addresses are a bulk lookup: each address gets its outcome; an
// invalid one names its index and is never sent; a repeat is looked up
// once.
func TestBulkOutcomes(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv)
	res := call(t, cs, "lookup_ip", ips("8.8.8.8", "not an address", "1.1.1.1", "8.8.8.8", "fe80::1%eth0"))
	require.False(t, res.IsError, "%s", text(res))
	out := output[lookupIPOut](t, res)
	require.Len(t, out.Results, 5)
	want := []string{"looked_up", "invalid", "looked_up", "looked_up", "invalid"}
	for i, r := range out.Results {
		assert.Equal(t, want[i], r.Outcome, "ips[%d]", i)
	}
	assert.Equal(t, "ips[1]", out.Results[1].Error.Argument)
	assert.Equal(t, "ips[4]", out.Results[4].Error.Argument)
	require.NotNil(t, out.Results[3].DuplicateOf)
	assert.Equal(t, 0, *out.Results[3].DuplicateOf)
	assert.Equal(t, "8.8.8.8", out.Results[3].Lookup["ip"])
	assert.Equal(t, 3, out.LookedUp)
	assert.Equal(t, 2, out.Invalid)
	assert.Equal(t, int64(2), out.CreditsSpent, "two distinct addresses sent")
	assert.Equal(t, int64(2), spent(srv))
	assert.Equal(t, []string{"8.8.8.8", "1.1.1.1"}, chargedIPs(srv))
}

// A run that the API refuses (402: out of credits) leaves every address
// rejected, charging nothing; the call is an error that says so.
func TestBulkOutOfCredits(t *testing.T) {
	t.Parallel()
	srv := newFake(t, synthienttest.WithCredits(1))
	cs, _ := startStdio(t, srv)
	res := call(t, cs, "lookup_ip", ips("8.8.8.8", "1.1.1.1", "9.9.9.9"))
	require.True(t, res.IsError, "%s", text(res))
	out := output[lookupIPOut](t, res)
	assert.Equal(t, 3, out.Rejected)
	require.NotNil(t, out.Error)
	assert.Equal(t, 402, out.Error.Status)
	assert.NotEmpty(t, out.Error.RequestID)
	assert.False(t, out.Error.MayHaveBeenCharged)
	assert.Contains(t, out.Error.Hint, "out of lookup credits")
	assert.Equal(t, int64(1), srv.Credits(srv.APIKey), "the fake charged nothing")
}

// chargedIPs are the addresses the fake charged for, as strings.
func chargedIPs(srv *synthienttest.Server) []string {
	var out []string
	for _, a := range srv.ChargedIPs() {
		out = append(out, a.String())
	}
	return out
}

// The text of a bulk lookup is a table whose columns line up, a risk
// score (which the CLI colours) included.
func TestBulkTextAligned(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv)
	res := call(t, cs, "lookup_ip", ips("203.0.113.7", "1.1.1.1"))
	require.False(t, res.IsError, "%s", text(res))
	lines := strings.Split(text(res), "\n")
	require.GreaterOrEqual(t, len(lines), 3, "%s", text(res))
	for _, col := range []string{"RISK", "CATEGORIES", "ANSWER"} {
		at := strings.Index(lines[0], col)
		require.Positive(t, at, col)
		for _, l := range lines[1:3] {
			require.Greater(t, len(l), at, "%s: a line shorter than its header:\n%s", col, text(res))
			assert.NotEqual(t, " ", l[at:at+1], "%s: the column does not start at %d:\n%s", col, at, text(res))
			assert.Equal(t, "  ", l[at-2:at], "%s: the column does not start at %d:\n%s", col, at, text(res))
		}
	}
	assert.NotContains(t, text(res), "\ue000", "a colour mark")
}
