package mcp

import (
	"context"
	"sync/atomic"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient"
)

// Credits: what a tool call spent is told by what the SDK returned (a
// lookup's CachedAt, a bulk result's Credits) and, for a lookup that
// shared the request of an identical call in flight (perhaps another
// session's), by the client's observer: its EndCall says Coalesced. The
// call that sent the request is the one that spent its credit.

// callCost is what the observer learnt of the SDK calls one tool call
// made. It travels in the tool call's context.
type callCost struct {
	shared atomic.Bool // a lookup shared another call's request
}

type callCostKey struct{}

// withCallCost returns ctx carrying c.
func withCallCost(ctx context.Context, c *callCost) context.Context {
	return context.WithValue(ctx, callCostKey{}, c)
}

// callCostOf returns the callCost ctx carries; nil for none.
func callCostOf(ctx context.Context) *callCost {
	c, _ := ctx.Value(callCostKey{}).(*callCost)
	return c
}

// costObserver is the client's observer: it marks the tool call whose
// lookup shared a request, and passes every event to next (--trace's
// printer), when there is one.
type costObserver struct {
	next synthient.Observer
}

func (o costObserver) StartCall(ctx context.Context, call synthient.CallStart) context.Context {
	if o.next != nil {
		return o.next.StartCall(ctx, call)
	}
	return ctx
}

func (o costObserver) StartRequest(ctx context.Context, req synthient.RequestStart) context.Context {
	if o.next != nil {
		return o.next.StartRequest(ctx, req)
	}
	return ctx
}

func (o costObserver) EndRequest(ctx context.Context, end synthient.RequestEnd) {
	if o.next != nil {
		o.next.EndRequest(ctx, end)
	}
}

func (o costObserver) Hold(ctx context.Context, hold synthient.PacingHold) {
	if o.next != nil {
		o.next.Hold(ctx, hold)
	}
}

func (o costObserver) EndCall(ctx context.Context, end synthient.CallEnd) {
	if c := callCostOf(ctx); c != nil && end.Coalesced {
		c.shared.Store(true)
	}
	if o.next != nil {
		o.next.EndCall(ctx, end)
	}
}

// sessionBudget is what a result reports of the credit budget a session
// draws on (--max-credits-per-session): the credits left. The budget
// itself is the SDK's (a client option that reserves a billed request's
// cost before it is sent, so that answers from the cache and shared
// requests cost nothing); see docs/mcp.md for what is still to come.
type sessionBudget interface {
	Left() int64
}

// budgetOf returns the budget session ss draws on, nil when it has none.
// It is the one place a session's budget is looked up.
func (t *tools) budgetOf(ss *gomcp.ServerSession) sessionBudget {
	if t.budgets == nil {
		return nil
	}
	return t.budgets(ss)
}
