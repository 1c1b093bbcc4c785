package mcp_test

// Tests of credits.go: --max-credits-per-session on the built command,
// driven by the go-sdk's client. The fake's credits are the truth.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

// left is what a result says is left of the session's budget.
func left(t *testing.T, res *gomcp.CallToolResult) int64 {
	t.Helper()
	c := output[credits](t, res)
	require.NotNil(t, c.CreditsLeft, "credits_left with a budget: %s", text(res))
	return *c.CreditsLeft
}

// requireRefused checks a result the budget refused: an error result
// whose addresses (n of them) were not sent, that says why and what to
// do, with credits_left as it was.
func requireRefused(t *testing.T, res *gomcp.CallToolResult, n int, wantLeft int64) {
	t.Helper()
	require.True(t, res.IsError, "%s", text(res))
	c := output[credits](t, res)
	require.NotNil(t, c.Error)
	assert.Equal(t, "credit_budget_exhausted", c.Error.StopReason)
	assert.Contains(t, c.Error.Message, "refused by the credit budget (request not sent)")
	assert.Contains(t, c.Error.Hint, "this session's credit budget has too few credits left")
	assert.False(t, c.Error.MayHaveBeenCharged)
	assert.Zero(t, c.CreditsSpent)
	assert.Equal(t, wantLeft, left(t, res))
	assert.Contains(t, text(res), "Hint: this session's credit budget")
	if n > 0 {
		out := output[lookupIPOut](t, res)
		assert.Equal(t, n, out.NotSent, "addresses not sent")
		for _, r := range out.Results {
			assert.Equal(t, "not_sent", r.Outcome, "%s", r.IP)
		}
	}
}

// A session's budget runs out mid-session: each billed call says what it
// spent and what is left; a call that does not fit is refused before
// anything is sent; what the API charged nothing for (a 429 without
// Retry-After) is given back, what it may have charged (a 503) is not;
// answers from the cache stay free, also at 0 left.
func TestBudgetRunsOutMidSession(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv, "--max-credits-per-session", "4")
	domain := map[string]any{"domain": "example.org"}

	res := call(t, cs, "get_account", nil)
	assert.Equal(t, int64(4), left(t, res), "a free tool: %s", text(res))
	assert.Contains(t, text(res), "left in this session's budget: 4.")

	res = call(t, cs, "lookup_ip", ips("1.1.1.1"))
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(3), left(t, res))

	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429})
	res = call(t, cs, "lookup_ip", ips("9.9.9.9"))
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(3), left(t, res), "a 429 charges nothing: given back")

	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	res = call(t, cs, "lookup_ip", ips("9.9.9.9"))
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(1), output[credits](t, res).CreditsMayHaveSpent)
	assert.Equal(t, int64(2), left(t, res), "a 503 may have been charged: kept")

	res = call(t, cs, "lookup_domain", domain)
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(1), left(t, res))

	before := srv.Arrivals(synthienttest.RouteLookupIPs)
	requireRefused(t, call(t, cs, "lookup_ip", ips("8.8.8.8", "8.8.4.4")), 2, 1) // costs 2
	assert.Equal(t, before, srv.Arrivals(synthienttest.RouteLookupIPs), "the refused batch was not sent")

	res = call(t, cs, "lookup_ip", ips("8.8.8.8"))
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(0), left(t, res))

	before = srv.Arrivals(synthienttest.RouteLookupIP)
	requireRefused(t, call(t, cs, "lookup_ip", ips("4.4.4.4")), 1, 0)
	requireRefused(t, call(t, cs, "lookup_domain", map[string]any{"domain": "example.net"}), 0, 0)
	assert.Equal(t, before, srv.Arrivals(synthienttest.RouteLookupIP), "nothing sent at 0 left")

	// At 0 left, what the cache holds is still free.
	for _, args := range []map[string]any{ips("1.1.1.1"), ips("8.8.8.8", "1.1.1.1"), domain} {
		name := "lookup_ip"
		if args["domain"] != nil {
			name = "lookup_domain"
		}
		res = call(t, cs, name, args)
		require.False(t, res.IsError, "%v: %s", args, text(res))
		assert.Zero(t, output[credits](t, res).CreditsSpent)
		assert.Equal(t, int64(0), left(t, res))
	}
	assert.Equal(t, int64(3), spent(srv), "the fake took 1.1.1.1, example.org and 8.8.8.8")
}

// Two sessions of one server have separate budgets: one running out does
// not touch the other's; the cache they share stays free for both.
func TestSessionsHaveSeparateBudgets(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	h := startHTTP(t, srv, "--max-credits-per-session", "2")
	a, b := h.connect(t, nil), h.connect(t, nil)

	assert.Equal(t, int64(1), left(t, call(t, a, "lookup_ip", ips("1.1.1.1"))))
	assert.Equal(t, int64(0), left(t, call(t, a, "lookup_ip", ips("8.8.8.8"))))
	requireRefused(t, call(t, a, "lookup_ip", ips("9.9.9.9")), 1, 0)

	res := call(t, b, "get_account", nil)
	assert.Equal(t, int64(2), left(t, res), "the second session's own budget")
	res = call(t, b, "lookup_ip", ips("1.1.1.1", "8.8.8.8"))
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(2), left(t, res), "the first session's answers, from the cache: free")
	res = call(t, b, "lookup_ip", ips("9.9.9.9"))
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(1), left(t, res))
	assert.Equal(t, int64(0), left(t, call(t, a, "get_account", nil)), "the first session's budget, still spent")

	// A new session starts with a whole budget.
	c := h.connect(t, nil)
	assert.Equal(t, int64(2), left(t, call(t, c, "get_account", nil)))
	assert.Equal(t, int64(3), spent(srv))
}

// A session whose budget is spent and one with credits look up the same
// address at once (the answer slow), round after round: whichever sends
// the request pays for it, and the spent session's refusal never refuses
// the other's call (it asks again on its own budget).
func TestSpentSessionSharesNoRefusal(t *testing.T) {
	t.Parallel()
	srv := newFake(t, synthienttest.WithLatency(50*time.Millisecond))
	h := startHTTP(t, srv, "--max-credits-per-session", "5")
	spentSession, other := h.connect(t, nil), h.connect(t, nil)
	assert.Equal(t, int64(0), left(t, call(t, spentSession, "lookup_ip", ips("1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4", "1.1.1.5"))))

	const rounds = 4
	for round := range rounds {
		addr := fmt.Sprintf("198.51.100.%d", round+1)
		var wg sync.WaitGroup
		spentRes := make([]*gomcp.CallToolResult, 4)
		var otherRes *gomcp.CallToolResult
		for i := range spentRes {
			wg.Go(func() { spentRes[i] = callTool(t, spentSession, addr) })
		}
		wg.Go(func() { otherRes = callTool(t, other, addr) })
		wg.Wait()
		require.False(t, otherRes.IsError, "round %d: the session with credits: %s", round, text(otherRes))
		assert.Equal(t, int64(5-round-1), left(t, otherRes), "round %d: it paid for the one request", round)
		for _, res := range spentRes {
			if res.IsError {
				requireRefused(t, res, 1, 0)
				continue
			}
			assert.Zero(t, output[credits](t, res).CreditsSpent, "round %d: shared or cached", round)
		}
	}
	assert.Equal(t, int64(5+rounds), spent(srv), "the spent session's batch, and one request a round")
}

// callTool calls lookup_ip of addr on cs and checks the result.
func callTool(t *testing.T, cs *gomcp.ClientSession, addr string) *gomcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: "lookup_ip", Arguments: ips(addr)})
	require.NoError(t, err)
	checkResult(t, cs, "lookup_ip", res)
	return res
}
