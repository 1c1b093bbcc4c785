package flight

import (
	"context"
	"sync"
	"time"
)

// flightContext is the context of a request that runs on a goroutine of
// its flight: the leader's values, no deadline, cancelled by the last
// caller to leave (with that caller's context's error as its Err). It
// keeps the context to plan with (Planning): itself with the latest
// deadline of its callers so far, or itself when one of them has none.
type flightContext struct {
	context.Context // a cancelCtx, for Done and Value: the contexts derived from it need no goroutine
	cancelCause     context.CancelCauseFunc

	mu      sync.Mutex
	plan    context.Context // replaced, never changed, when a caller's deadline moves the latest
	latest  time.Time       // the latest deadline, while bounded
	bounded bool            // every caller so far has a deadline
}

func newFlightContext(ctx context.Context) *flightContext {
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	fc := &flightContext{Context: base, cancelCause: cancel}
	fc.plan = fc
	if d, ok := ctx.Deadline(); ok {
		fc.latest, fc.bounded = d, true
		fc.plan = &planContext{Context: fc, deadline: d}
	}
	return fc
}

// join takes the deadline of a caller with ctx into the plan. It does
// nothing on a nil *flightContext (a leader who cannot leave).
func (fc *flightContext) join(ctx context.Context) {
	if fc == nil {
		return
	}
	d, ok := ctx.Deadline()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	switch {
	case !fc.bounded:
	case !ok:
		fc.bounded, fc.plan = false, fc
	case d.After(fc.latest):
		fc.latest = d
		fc.plan = &planContext{Context: fc, deadline: d}
	}
}

// cancel cancels the request with cause. It does nothing on a nil
// *flightContext.
func (fc *flightContext) cancel(cause error) {
	if fc != nil {
		fc.cancelCause(cause)
	}
}

// Err returns nil until the last caller left, then that caller's
// context's error.
func (fc *flightContext) Err() error {
	if fc.Context.Err() == nil {
		return nil
	}
	return context.Cause(fc.Context)
}

// planKey is the context key under which a flightContext finds itself.
type planKey struct{}

// Value returns fc for planKey, else the value of the leader's context.
func (fc *flightContext) Value(key any) any {
	if key == (planKey{}) {
		return fc
	}
	return fc.Context.Value(key)
}

// planContext is a flight's context with a deadline to plan with: the
// latest deadline of its callers when it was made. Its Done and Err are
// the flight's: it ends when the last caller leaves, which is at that
// deadline unless a caller with a later one joined since (whose plan is
// another planContext).
type planContext struct {
	context.Context
	deadline time.Time
}

// Deadline returns the latest deadline of the flight's callers when the
// context was made.
func (p *planContext) Deadline() (time.Time, bool) { return p.deadline, true }

// A Planner gives the context that the waits of a flight's request are
// planned with.
type Planner interface {
	// Planning returns the flight's context with the latest deadline of
	// the callers waiting now, or without one when one of them has none.
	Planning() context.Context
}

// Planning implements Planner.
func (fc *flightContext) Planning() context.Context {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.plan
}

// PlannerOf returns the Planner of the flight whose request runs with ctx
// (or a context derived from it), nil when ctx is no flight's: its own
// deadline is then the one to plan with.
func PlannerOf(ctx context.Context) Planner {
	if fc, ok := ctx.Value(planKey{}).(*flightContext); ok {
		return fc
	}
	return nil
}
