// Package observe joins what an observer (synthient.Observer) returns to
// the call it watches, without letting it change the call.
//
// The model. An observer is given a context for a call or a request, and
// returns one of its own (StartCall, StartRequest), which should be
// derived from the given one, or be it. Whatever it returned, the call
// goes on with the given context's deadline and cancellation, and finds a
// value in the returned context first, then in the given one (Context):
// an observer that returned context.Background cannot free a call of its
// deadline. Headers an observer adds to an attempt (trace context, such
// as W3C traceparent) go on a copy of the request, each only where the
// request does not carry that header already (Request): an observer can
// add a header, never replace one, such as the API key.
package observe

import (
	"context"
	"net/http"
	"slices"
)

// Context returns the context a call or request goes on with, given what
// an observer returned for ctx: its values, looked up first, with ctx's
// deadline and cancellation; ctx itself when it returned nil or ctx.
func Context(ctx, returned context.Context) context.Context {
	if returned == nil || returned == ctx {
		return ctx
	}
	return valuesFirst{Context: ctx, values: returned}
}

// valuesFirst is a context (the embedded one: its deadline, cancellation
// and values) with the values of another looked up first.
type valuesFirst struct {
	context.Context
	values context.Context
}

func (c valuesFirst) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// Request returns a copy of r with ctx, and with each header of added that
// r does not carry: r itself is left as it is, for the next attempt.
func Request(ctx context.Context, r *http.Request, added http.Header) *http.Request {
	own := r.WithContext(ctx)
	if len(added) == 0 {
		return own
	}
	own.Header = r.Header.Clone()
	for k, v := range added {
		k = http.CanonicalHeaderKey(k)
		if _, ok := own.Header[k]; !ok {
			own.Header[k] = slices.Clone(v)
		}
	}
	return own
}
