package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of tool.go in-process (white-box): what cannot be made to happen
// in the built command, a panic, and the seam of a session's budget.

// inProcess returns the tools of a server on a fake API, their log, and a
// client session connected to srv, built by build from them.
func inProcess(t *testing.T, build func(*tools) *gomcp.Server) (*tools, *strings.Builder, *gomcp.ClientSession) {
	t.Helper()
	fake := synthienttest.NewServer()
	t.Cleanup(fake.Close)
	c, err := fake.NewClient()
	require.NoError(t, err)
	var mu sync.Mutex
	var log strings.Builder
	tl := &tools{client: c, describe: (&clierr.Describer{Secrets: &redact.Redactor{}}).Describe, redact: func(s string) string { return s },
		log: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&log, format+"\n", args...)
		}}
	srv := build(tl)
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return tl, &log, cs
}

// callIn calls tool name of cs with args and decodes its structured
// content into out.
func callIn(t *testing.T, cs *gomcp.ClientSession, name string, args, out any) *gomcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, out))
	return res
}

// A panic in a tool is an error result, which says neither where nor
// why (the log does); a billed tool's may have been charged; the server
// serves the next call.
func TestPanicIsAnErrorResult(t *testing.T) {
	t.Parallel()
	_, log, cs := inProcess(t, func(tl *tools) *gomcp.Server {
		srv := newServer(tl)
		addTool(srv, tl, tool{name: "boom", billed: true, description: "panics"},
			func(context.Context, noArgs) (*listFeedStreamsOut, error) { panic("the state of boom") })
		return srv
	})
	var out outcome
	res := callIn(t, cs, "boom", nil, &out)
	require.True(t, res.IsError)
	require.NotNil(t, out.Error)
	assert.Equal(t, errPanicked.Error(), out.Error.Message)
	assert.True(t, out.Error.MayHaveBeenCharged, "a billed tool that panicked")
	wire, err := json.Marshal(res)
	require.NoError(t, err)
	assert.NotContains(t, string(wire), "the state of boom", "the panic's value reached the client")
	assert.NotContains(t, string(wire), "goroutine ", "a stack reached the client")
	assert.Contains(t, log.String(), "boom: internal error: the state of boom")

	var next listFeedStreamsOut
	res = callIn(t, cs, "list_feed_streams", nil, &next)
	assert.False(t, res.IsError)
	assert.Len(t, next.Streams, 8)
}

// The seam of --max-credits-per-session: a session that draws on a budget
// gets credits_left in every result, and its text says it; one with none
// gets no credits_left.
func TestSessionBudgetSeam(t *testing.T) {
	t.Parallel()
	tl, _, cs := inProcess(t, newServer)
	var out lookupIPOut
	res := callIn(t, cs, "lookup_ip", map[string]any{"ips": []string{"8.8.8.8"}}, &out)
	require.False(t, res.IsError)
	assert.Nil(t, out.CreditsLeft, "credits_left without a budget")
	assert.NotContains(t, res.Content[0].(*gomcp.TextContent).Text, "budget")

	budget := memoryBudget{synthient.NewCreditBudget(41, 0)}
	tl.budgets = func(*gomcp.ServerSession) sessionBudget { return budget }
	res = callIn(t, cs, "get_account", nil, &out)
	require.False(t, res.IsError)
	require.NotNil(t, out.CreditsLeft)
	assert.Equal(t, int64(41), *out.CreditsLeft)
	assert.Contains(t, res.Content[0].(*gomcp.TextContent).Text, "Credits spent: 0; left in this session's budget: 41.")
}

// A session's budget is made at its first call, and dropped once the
// session closes.
func TestSessionBudgetDroppedAtClose(t *testing.T) {
	t.Parallel()
	sb := newSessionBudgets(5)
	_, _, cs := inProcess(t, func(tl *tools) *gomcp.Server {
		tl.budgets = sb.of
		return newServer(tl)
	})
	assert.Zero(t, sb.sessions(), "before the first call")
	var out outcome
	callIn(t, cs, "get_account", nil, &out)
	require.NotNil(t, out.CreditsLeft)
	assert.Equal(t, int64(5), *out.CreditsLeft)
	assert.Equal(t, 1, sb.sessions())
	require.NoError(t, cs.Close())
	require.Eventually(t, func() bool { return sb.sessions() == 0 }, time.Minute, time.Millisecond, "the closed session's budget is dropped")
}

// A call whose context carries no session's budget is not sent: the
// router fails the reservation.
func TestSessionRouterWithoutASession(t *testing.T) {
	t.Parallel()
	fake := synthienttest.NewServer()
	t.Cleanup(fake.Close)
	c, err := fake.NewClient(synthient.WithCreditBudget(sessionRouter{}))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.LookupIP(t.Context(), netip.MustParseAddr("8.8.8.8"))
	require.ErrorIs(t, err, errNoSessionBudget)
	assert.Zero(t, fake.Arrivals(synthienttest.RouteLookupIP))
}
