package mcp

import (
	"context"
	"errors"
	"sync"
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

// Budgets (--max-credits-per-session N): each session draws on a credit
// budget of its own, the SDK's in memory (synthient.NewCreditBudget(N, 0)),
// made at its first tool call and dropped when it closes. The one client
// every session shares has one CreditBudget, sessionRouter, which draws
// each call on the budget its context carries: addTool puts the session's
// there. A request shared by calls of several sessions is reserved on the
// budget of the one that sent it (the SDK's flight carries its context);
// the others spend nothing, and a call whose sharing was refused by
// another session's budget asks again on its own. Answers from the cache
// reserve nothing: they stay free when a budget is spent.

// sessionBudget is the credit budget of one session.
type sessionBudget interface {
	synthient.CreditBudget
	// Left returns the credits the session has left.
	Left() int64
}

// memoryBudget is a session's budget in memory.
type memoryBudget struct{ synthient.CreditBudget }

// Left returns what the budget's Balance says is left.
func (b memoryBudget) Left() int64 {
	bal, err := b.Balance(context.Background())
	if err != nil {
		return 0 // an in-memory budget does not fail
	}
	return bal.Left
}

// sessionBudgets are the budgets of the sessions of a server, of credits
// each. They are safe for concurrent use.
type sessionBudgets struct {
	credits int64
	mu      sync.Mutex
	live    map[*gomcp.ServerSession]sessionBudget
}

func newSessionBudgets(credits int64) *sessionBudgets {
	return &sessionBudgets{credits: credits, live: map[*gomcp.ServerSession]sessionBudget{}}
}

// of returns the budget of session ss, made at its first call; it is
// dropped once ss closes.
func (sb *sessionBudgets) of(ss *gomcp.ServerSession) sessionBudget {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if b, ok := sb.live[ss]; ok {
		return b
	}
	b := memoryBudget{synthient.NewCreditBudget(sb.credits, 0)}
	sb.live[ss] = b
	go func() {
		_ = ss.Wait() // the session's end: the client went, or the server stopped
		sb.mu.Lock()
		defer sb.mu.Unlock()
		delete(sb.live, ss)
	}()
	return b
}

// sessions returns how many sessions have a budget.
func (sb *sessionBudgets) sessions() int {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return len(sb.live)
}

type sessionBudgetKey struct{}

// withSessionBudget returns ctx carrying b, the budget of the session
// whose tool call ctx is.
func withSessionBudget(ctx context.Context, b sessionBudget) context.Context {
	return context.WithValue(ctx, sessionBudgetKey{}, b)
}

// errNoSessionBudget is the failure of sessionRouter for a call whose
// context carries no session's budget: the request is not sent.
var errNoSessionBudget = errors.New("the call belongs to no session with a budget")

// sessionRouter is the CreditBudget of the client every session shares:
// it draws each call on the session's budget its context carries. A
// context without one fails the reservation: nothing is sent.
type sessionRouter struct{}

func (sessionRouter) of(ctx context.Context) (sessionBudget, error) {
	if b, ok := ctx.Value(sessionBudgetKey{}).(sessionBudget); ok {
		return b, nil
	}
	return nil, errNoSessionBudget
}

func (r sessionRouter) Reserve(ctx context.Context, credits int64) (synthient.CreditReservation, error) {
	b, err := r.of(ctx)
	if err != nil {
		return synthient.CreditReservation{}, err
	}
	return b.Reserve(ctx, credits)
}

func (r sessionRouter) Refund(ctx context.Context, res synthient.CreditReservation, credits int64) error {
	b, err := r.of(ctx)
	if err != nil {
		return err
	}
	return b.Refund(ctx, res, credits)
}

func (r sessionRouter) Balance(ctx context.Context) (synthient.CreditBalance, error) {
	b, err := r.of(ctx)
	if err != nil {
		return synthient.CreditBalance{}, err
	}
	return b.Balance(ctx)
}

// budgetOf returns the budget session ss draws on, nil when it has none.
// It is the one place a session's budget is looked up.
func (t *tools) budgetOf(ss *gomcp.ServerSession) sessionBudget {
	if t.budgets == nil {
		return nil
	}
	return t.budgets(ss)
}
