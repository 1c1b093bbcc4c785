// Rate-limit pacing, the call's side: the model of each bucket is package
// internal/pace; this file names the buckets and runs the model around
// each attempt.

package synthient

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/synthient-go/synthient/internal/pace"
	"github.com/synthient-go/synthient/retry"
)

// bucket names the rate limit an operation counts against (api-v4.md §5).
// The zero value, noBucket, is never paced.
type bucket uint8

const (
	noBucket       bucket = iota // /health and the storage host: no rate limit
	lookupBucket                 // LookupIP and LookupIPs, which the API counts as one
	domainBucket                 // LookupDomain
	accountBucket                // Account
	streamBucket                 // opening a stream
	exportBucket                 // export listings and meta
	downloadBucket               // the API leg of a download
	bucketCount
)

var bucketNames = [bucketCount]string{"", "lookup", "domain", "account", "stream", "export", "download"}

// String returns the bucket's name for logs, such as "lookup".
func (b bucket) String() string { return bucketNames[b] }

// pacer holds the client's model of each rate-limit bucket (package
// internal/pace). Its methods are safe for concurrent use. A nil *pacer
// paces nothing (WithoutPacing).
type pacer struct {
	// maxHold is the longest turn an attempt waits for, the client's
	// MaxRetryAfter: the model is only a model, and a longer wait (from
	// headers that say a bucket refills a token an hour, say) is not taken
	// on its word: the attempt goes, and the server answers.
	maxHold time.Duration
	buckets [bucketCount]pace.Bucket
}

// newPacer returns a pacer that knows nothing yet, that holds an attempt
// at most maxHold.
func newPacer(maxHold time.Duration) *pacer {
	return &pacer{maxHold: maxHold}
}

// rateLimitOf reads the RateLimit headers of h; ok reports that all three
// are present and usable (a positive limit). It allocates nothing.
func rateLimitOf(h http.Header) (limit, remaining int, reset time.Duration, ok bool) {
	limit, okL := headerInt(h, "Ratelimit-Limit")
	remaining, okR := headerInt(h, "Ratelimit-Remaining")
	seconds, okS := headerInt(h, "Ratelimit-Reset")
	if !okL || !okR || !okS || limit <= 0 {
		return 0, 0, 0, false
	}
	return limit, remaining, resetDuration(seconds), true
}

// pace holds the call's next attempt until the model of its bucket lets
// it go. It reports false, with the hold in cl.unsent and nothing left in
// flight, when the hold would pass ctx's deadline or ctx ends during it.
func (cl *call) pace(ctx context.Context) bool {
	p, b := cl.c.pacer, cl.op.bucket
	if p == nil || b == noBucket {
		return true
	}
	t, h, ok := p.buckets[b].Wait(ctx, p.maxHold, func(h pace.Hold) {
		cl.logPacing(ctx, h.Wait, "", h.Shared)
		cl.observeHold(h.Wait, "", h.Shared)
	})
	if !ok {
		cl.unsent = unsent{held: true, ctxErr: h.Err, wait: h.Wait, shared: h.Shared}
		return false
	}
	cl.paced, cl.ticket = true, t
	return true
}

// learn gives the model of the call's bucket what the attempt that just
// ended says: its answer's status and RateLimit headers and, for a 429
// that will be waited out, its Retry-After; or, for an attempt without an
// answer, that it is no longer in flight.
func (cl *call) learn(resp *http.Response, throttled bool, retryAfter time.Duration) {
	if !cl.paced {
		return
	}
	cl.paced = false
	bk := &cl.c.pacer.buckets[cl.op.bucket]
	if resp == nil {
		bk.Release(cl.ticket)
		return
	}
	a := pace.Answer{Status: resp.StatusCode, Throttled: throttled, RetryAfter: retryAfter}
	a.Limit, a.Remaining, a.Reset, _ = rateLimitOf(resp.Header)
	bk.Answer(cl.ticket, a)
}

// holdStop stops the call whose next attempt pacing held and did not
// send (cl.unsent): with retry.PacingExceedsDeadline when the hold would
// pass ctx's deadline (retry.TeamShareExceedsDeadline when the hold is for
// the team), with retry.ContextDone when ctx ended during it. For a first
// attempt the call's error is a *ConnectionError with NotSent set; for a
// retry it wraps the last attempt's error, as a stop during a retry's wait
// does.
func (cl *call) holdStop(ctx context.Context) error {
	h := &cl.unsent
	reason := retry.PacingExceedsDeadline
	switch {
	case h.ctxErr != nil:
		reason = retry.ContextDone
	case h.shared:
		reason = retry.TeamShareExceedsDeadline
	}
	cl.logPacing(ctx, h.wait, reason, h.shared)
	cl.observeHold(h.wait, reason, h.shared)
	first := !cl.last.set()
	if first {
		cl.last = heldOutcome(h.ctxErr)
	}
	if reason == retry.ContextDone || first {
		return cl.stop(ctx, reason)
	}
	m := cl.meta(reason)
	return stopError(m, ErrRateLimitHold, callError(m, &cl.last, cl.reached))
}

// logPacing writes a hold of the call's next attempt to the client's
// logger: at Debug a wait of wait, at Info a stop for reason; shared
// reports a hold for the team (step.shared).
func (cl *call) logPacing(ctx context.Context, wait time.Duration, reason retry.StopReason, shared bool) {
	lg := cl.c.logger
	level, decision := slog.LevelDebug, "hold"
	if reason != "" {
		level, decision = slog.LevelInfo, "stop"
	}
	if lg == nil || !lg.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", cl.op.method),
		slog.String("route", cl.op.route),
		slog.String("bucket", cl.op.bucket.String()),
		slog.Int("attempt", cl.attempts+1),
		slog.Duration("wait", wait),
		slog.Bool("shared", shared),
	}
	if deadline, ok := ctx.Deadline(); ok {
		attrs = append(attrs, slog.Duration("time_left", time.Until(deadline)))
	}
	attrs = append(attrs, slog.String("decision", decision))
	if reason != "" {
		attrs = append(attrs, slog.String("reason", string(reason)))
	}
	lg.LogAttrs(ctx, level, "synthient: pacing", attrs...)
}
