// Package trace prints what the SDK reports of each call on stderr: the
// tree of --trace (a synthient.Observer) and the retry decisions of -v (a
// slog.Handler).
package trace

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// Tracer is the synthient.Observer of --trace: when a call ends it prints
// the call's tree on w, one line per node, the call's children indented
// below it:
//
//	trace LookupIP (billed): ok, 2 attempts in 1.004s
//	  attempt 1: GET /lookup/ip/{ip} -> 429 in 2ms, request id 5e1c...: retry
//	  wait 1s (Retry-After 1s)
//	  attempt 2: GET /lookup/ip/{ip} -> 200 in 1ms, request id 8a2f...: done
//
// A wait is the one the client chose; a hold, rate-limit pacing's. Each
// call's tree is written at once, under a lock, so that calls made at once
// (lookup ips) do not mix their lines. What the server sent (a request
// id) is put on one line here, and w, the command's stderr, escapes the
// rest (see package textsafe).
type Tracer struct {
	mu sync.Mutex
	w  io.Writer
	// Now is the clock of the durations; New sets time.Now.
	now func() time.Time
}

// SetClock makes tr time the calls with now, for tests.
func (tr *Tracer) SetClock(now func() time.Time) { tr.now = now }

// New returns a Tracer that writes to w.
func New(w io.Writer) *Tracer { return &Tracer{w: w, now: time.Now} }

// traceCall is a call's tree so far, in the call's context.
type traceCall struct {
	start time.Time
	op    string   // "LookupIP"
	head  string   // "LookupIP (billed)"
	nodes []string // the lines below it, in order
}

// traceRequest is a request under way, in the request's context.
type traceRequest struct {
	start time.Time
	head  string // "attempt 1: GET /lookup/ip/{ip}"
}

type traceCallKey struct{}
type traceRequestKey struct{}

// StartCall begins the tree of a call, kept in the returned context.
func (tr *Tracer) StartCall(ctx context.Context, s synthient.CallStart) context.Context {
	call := &traceCall{start: tr.now(), op: s.Operation, head: fmt.Sprintf("%s (%s)", s.Operation, s.Class)}
	return context.WithValue(ctx, traceCallKey{}, call)
}

// StartRequest notes the start of a request, kept in the returned
// context, for the line EndRequest adds.
func (tr *Tracer) StartRequest(ctx context.Context, r synthient.RequestStart) context.Context {
	target := r.Route
	if r.Storage {
		target = "storage " + textsafe.EscapeCell(r.URL) // without its query
	}
	head := fmt.Sprintf("attempt %d: %s %s", r.Attempt, r.Method, target)
	return context.WithValue(ctx, traceRequestKey{}, &traceRequest{start: tr.now(), head: head})
}

// EndRequest adds the request's line to its call's tree: its status or
// error, its duration and request id, and the client's decision (with
// the wait before a retry).
func (tr *Tracer) EndRequest(ctx context.Context, e synthient.RequestEnd) {
	call, _ := ctx.Value(traceCallKey{}).(*traceCall)
	req, _ := ctx.Value(traceRequestKey{}).(*traceRequest)
	if call == nil || req == nil {
		return
	}
	outcome := e.ErrorKind + " error"
	if e.Status != 0 {
		outcome = fmt.Sprint(e.Status)
	}
	line := fmt.Sprintf("%s -> %s in %s", req.head, outcome, round(tr.now().Sub(req.start)))
	if e.RequestID != "" {
		line += ", request id " + textsafe.EscapeCell(e.RequestID)
	}
	d := e.Decision
	switch {
	case d.Retry:
		call.nodes = append(call.nodes, line+": retry", "wait "+round(d.Wait)+waitCause(d.HasRetryAfter, d.RetryAfter))
	case d.Reason != "":
		call.nodes = append(call.nodes, line+": stop, "+string(d.Reason))
	default:
		call.nodes = append(call.nodes, line+": done")
	}
}

// waitCause says what set a wait: the server's Retry-After, or the
// backoff.
func waitCause(hasRetryAfter bool, retryAfter time.Duration) string {
	if hasRetryAfter {
		return " (Retry-After " + round(retryAfter) + ")"
	}
	return " (backoff)"
}

// Hold adds a line for a pacing hold before an attempt to the call's
// tree.
func (tr *Tracer) Hold(ctx context.Context, h synthient.PacingHold) {
	call, _ := ctx.Value(traceCallKey{}).(*traceCall)
	if call == nil {
		return
	}
	call.nodes = append(call.nodes, holdLine(h.Bucket, h.Attempt, h.Wait, string(h.Stop)))
}

// holdLine is a pacing hold as --trace and -v print it: "hold 8ms before
// attempt 1 (lookup rate limit)", and ": stop, REASON" when the call
// stops instead of waiting (stop is not empty).
func holdLine(bucket string, attempt int, wait time.Duration, stop string) string {
	line := fmt.Sprintf("hold %s before attempt %d (%s rate limit)", round(wait), attempt, bucket)
	if stop != "" {
		line += ": stop, " + stop
	}
	return line
}

// EndCall prints the call's tree on w: its outcome, attempts and
// duration, then its lines.
func (tr *Tracer) EndCall(ctx context.Context, e synthient.CallEnd) {
	call, _ := ctx.Value(traceCallKey{}).(*traceCall)
	if call == nil {
		return
	}
	var b strings.Builder
	outcome := "ok"
	if e.Err != nil {
		outcome = "error: " + render.OneLine(e.Err.Error())
		if e.StopReason != "" {
			outcome += " (" + string(e.StopReason) + ")"
		}
	}
	fmt.Fprintf(&b, "trace %s: %s, %s in %s", call.head, outcome, render.Attempts(call.op, e.Attempts), round(tr.now().Sub(call.start)))
	if e.Bytes > 0 {
		fmt.Fprintf(&b, ", %d bytes downloaded", e.Bytes)
	}
	b.WriteByte('\n')
	for _, n := range call.nodes {
		b.WriteString("  " + n + "\n")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	_, _ = io.WriteString(tr.w, b.String())
}

// round rounds d for the trace: to the millisecond from 1 ms on, else to
// the microsecond.
func round(d time.Duration) string {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}
