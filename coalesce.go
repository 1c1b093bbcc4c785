package synthient

import (
	"context"
	"errors"

	"github.com/synthient-go/synthient/internal/flight"
	"github.com/synthient-go/synthient/retry"
)

// share returns the answer of fetch for key, sharing the request of an
// identical call in flight (package internal/flight describes how). op
// names the method, call is the caller's observed call, and dup copies an
// answer for a caller other than the one that sent the request.
//
// The refusal of a credit budget is the leader's own: a budget can tell
// callers apart by their contexts (the mcp command's, one per session),
// so a caller that shared a request its leader's budget did not let go
// asks again, with its own, up to maxRejoins times.
func share[T any](ctx context.Context, g *flight.Group[T], call *observedCall, op, key string,
	fetch func(context.Context) (T, error), dup func(T) T) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		// As do would: nothing is sent for a call whose context ended (the
		// flight's context would not have).
		return zero, stopError(meta{op: op, reason: retry.ContextDone}, err, nil)
	}
	var owner flight.Owner
	if call != nil {
		owner = call
	}
	res, how, err := g.Do(ctx, key, fetch, dup, owner)
	for i := 0; i < maxRejoins && how == flight.Shared && budgetStopped(err) && ctx.Err() == nil; i++ {
		res, how, err = g.Do(ctx, key, fetch, dup, owner)
	}
	switch {
	case how == flight.Left:
		return zero, leftError(op, err)
	case how == flight.Sent:
		return res, err
	case errors.Is(err, flight.ErrPanicked):
		return zero, opError(meta{op: op}, "the call that sent the shared request panicked", nil)
	case err == nil:
		call.coalesced(1)
	}
	return res, err
}

// maxRejoins bounds how many times share asks again after its leader's
// budget refused the request it shared.
const maxRejoins = 8

// leftError is the error of a caller that left a request it shared with
// other calls because its context ended with err: the request goes on for
// them.
func leftError(op string, err error) error {
	return opError(meta{op: op, reason: retry.ContextDone}, "left the request it shared with identical calls before the answer", err)
}
