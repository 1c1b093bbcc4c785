// Package otel traces and measures the calls of a synthient.Client with
// OpenTelemetry. It lives in a module of its own, so that the SDK's module
// depends on no part of OpenTelemetry.
//
// NewObserver returns a synthient.Observer; give it to the client with
// synthient.WithObserver:
//
//	obs, err := otel.NewObserver(otel.WithTracerProvider(tp), otel.WithMeterProvider(mp))
//	c, err := synthient.NewClient(key, synthient.WithObserver(obs))
//
// The tracer and the meter have the instrumentation scope ScopeName, at
// the module's Version, with the schema URL of the semantic conventions
// the module follows (SchemaURL, semconv v1.43.0).
//
// # Traces
//
// Each call of a client method is an internal span named after the
// method, "synthient.LookupIP", with the attributes synthient.operation
// and synthient.retry.class at its start, and synthient.attempts,
// synthient.stop_reason, synthient.request_id (of the last answer) and,
// for a download, synthient.download.bytes at its end. A call that failed
// has the status Error, described by the error's text (which the SDK keeps
// free of keys and URLs), and an error.type: the status code of an
// *APIError ("429"), or "timeout", "connection", "decode",
// "context_canceled", "context_deadline_exceeded", "rate_limit_hold",
// "credit_budget", "credit_budget_failed", "invalid_argument", "closed",
// "size_mismatch", "size_unknown", "checksum_mismatch", else "_OTHER".
//
// Under it, each HTTP request the call sends is a client span, as the
// OpenTelemetry semantic conventions for HTTP clients say: named "GET
// /lookup/ip/{ip}" (the method and the route template; the method alone
// for the storage host), with http.request.method, server.address,
// server.port, url.scheme, url.full, url.template,
// http.request.resend_count (from the second attempt of a leg on),
// http.response.status_code, network.protocol.version (the answer's HTTP
// version, "1.1"; absent without an answer) and error.type (the status
// code from 400 on, or the kind of failure: "timeout", "dial", "dns",
// "tls", "connection", "malformed", "context"), and the SDK's
// synthient.request_id, synthient.decision ("retry", "stop" or "done") and
// synthient.stop_reason. A client span with an error.type has the status
// Error: for an answer from 400 on with no description, which the status
// code implies (the conventions say not to set one); for a request that
// got no answer described by the kind of failure. A client span ends when
// the response headers arrived (or the request failed), before the body
// is read. Both legs of a download are client
// spans: the API's 307, and the request to the storage host, whose
// url.full has no query (the presigned URL's signature is in it). Opening
// a stream is one; the call's span lasts until the loop over the stream
// ends.
//
// Each wait before a retry is an event "synthient.retry.wait" on the call's
// span, with synthient.wait.duration (seconds), synthient.wait.cause
// ("retry_after" when the answer asked for a wait, which the wait is never
// shorter than, else "backoff"), synthient.retry_after (seconds, the wait
// the answer asked for) and synthient.attempt (the attempt it follows).
// Each hold of rate-limit pacing is an event "synthient.pacing.hold" with
// synthient.pacing.bucket, synthient.wait.duration and, when the hold
// stopped the call, synthient.stop_reason. Both record the wait as the
// client planned it: a wait that the context cut short is not reported
// again.
//
// http.request.resend_count counts the attempts of one leg: the storage
// request, which follows the API's 307, is not counted as a resend of it
// (the conventions count redirects too), as it is a request of its own to
// another host.
//
// Trace context is put into every request to the API with the propagator
// (W3C traceparent with propagation.TraceContext), never into a request to
// the storage host. A transport given with synthient.WithTransport sees
// the call's span in the context of every request, the storage one
// included: do not wrap it with otelhttp, which would make a second client
// span per request and send the trace context to the storage host (or
// filter the storage host out of it). No attribute or event holds the API
// key, a request body, a header, or the query of a presigned URL.
//
// # A body that fails
//
// The answer a call takes (a 200, or a download's 307) can still fail
// after its client span ended: a body cut short or that does not decode,
// a download of the wrong size or checksum, a stream that breaks off or
// that Close ends. Such a failure shows on the call's span (status Error,
// error.type "connection", "timeout", "decode", "size_mismatch",
// "checksum_mismatch", "closed", ...) and on that request's
// http.client.request.duration point, as its error.type: the point of the
// answer a call takes is recorded once the call is done with its body
// (when its next request starts, or when it ends: for a stream, when the
// loop ends), with the time to the response headers. A failure of the
// caller's own (a writer or file that fails) is on the call's span only.
//
// # Metrics
//
//   - http.client.request.duration (s): each request, with its method,
//     server, scheme, status code, network.protocol.version and
//     error.type (also for a body that failed; see above).
//   - synthient.client.calls ({call}): calls by synthient.operation and
//     synthient.outcome ("ok" or "error", with error.type).
//   - synthient.client.retries ({retry}): retries by synthient.operation and
//     synthient.retry.reason ("rate_limited", "server_error", "timeout" or
//     "connection").
//   - synthient.client.rate_limited ({response}): 429 answers, by
//     synthient.operation.
//   - synthient.client.pacing.holds ({hold}): holds of rate-limit pacing,
//     by synthient.operation and synthient.pacing.bucket, with
//     synthient.stop_reason for one that stopped the call.
//   - synthient.client.download.size (By): the bytes downloads wrote, by
//     synthient.operation.
//   - synthient.client.cache.hits ({answer}): answers taken from the
//     client's lookup cache (synthient.WithCache), by synthient.operation.
//   - synthient.client.coalesced ({call}): calls that shared the request of
//     an identical call in flight, by synthient.operation.
//   - synthient.client.credits_saved ({credit}): the credits the cache and
//     the shared requests saved, by synthient.operation.
//   - synthient.client.cache.errors ({call}): calls during which the lookup
//     cache failed (they went on without it), by synthient.operation.
//   - synthient.client.credits.reserved, .spent, .refunded and .refused
//     ({credit}): what the calls drew on the client's credit budget
//     (synthient.WithCreditBudget), by synthient.operation: reserved before
//     requests were sent; spent, kept as charged or maybe charged; refunded,
//     the API having charged nothing; refused, the cost of requests the
//     budget did not let go (error.type "credit_budget", or
//     "credit_budget_failed" when the budget's store failed).
//
// A call's span has the attributes synthient.cache.hits,
// synthient.coalesced, synthient.credits_saved and
// synthient.credits.reserved, .spent, .refunded and .refused when they are
// not zero.
package otel

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/synthient-go/synthient/otel"

// Version is the version of this module, the instrumentation scope's
// version. The module is released with the SDK, at the SDK's version
// (synthient.Version).
const Version = "0.1.0"

// SchemaURL is the schema URL of the scope: that of the semantic
// conventions the attributes and metrics follow (semconv v1.43.0).
const SchemaURL = semconv.SchemaURL

// The SDK's attributes.
const (
	attrOperation  = attribute.Key("synthient.operation")
	attrClass      = attribute.Key("synthient.retry.class")
	attrAttempts   = attribute.Key("synthient.attempts")
	attrStopReason = attribute.Key("synthient.stop_reason")
	attrRequestID  = attribute.Key("synthient.request_id")
	attrBytes      = attribute.Key("synthient.download.bytes")
	attrDecision   = attribute.Key("synthient.decision")
	attrWait       = attribute.Key("synthient.wait.duration")
	attrWaitCause  = attribute.Key("synthient.wait.cause")
	attrRetryAfter = attribute.Key("synthient.retry_after")
	attrAttempt    = attribute.Key("synthient.attempt")
	attrBucket     = attribute.Key("synthient.pacing.bucket")
	attrOutcome    = attribute.Key("synthient.outcome")
	attrRetryWhy   = attribute.Key("synthient.retry.reason")
	attrCacheHits  = attribute.Key("synthient.cache.hits")
	attrCoalesced  = attribute.Key("synthient.coalesced")
	attrSaved      = attribute.Key("synthient.credits_saved")
	attrReserved   = attribute.Key("synthient.credits.reserved")
	attrSpent      = attribute.Key("synthient.credits.spent")
	attrRefunded   = attribute.Key("synthient.credits.refunded")
	attrRefused    = attribute.Key("synthient.credits.refused")
)

// Observer is a synthient.Observer that records traces and metrics with
// OpenTelemetry (see the package documentation). Create one with
// NewObserver; it is safe for concurrent use, and one Observer may serve
// any number of clients.
type Observer struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	m          instruments
	ops        *memo[opKey, *opInfo]       // by operation
	routes     *memo[routeKey, *routeInfo] // by method, route and origin
}

var _ synthient.Observer = (*Observer)(nil)

// Option configures an Observer. An invalid value makes NewObserver return
// an error.
type Option func(*config) error

type config struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	propagator propagation.TextMapPropagator
}

// WithTracerProvider sets the provider of the tracer. The default is the
// global one, otel.GetTracerProvider(). nil is an error.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error {
		if tp == nil {
			return errNil("tracer provider")
		}
		c.tp = tp
		return nil
	}
}

// WithMeterProvider sets the provider of the meter. The default is the
// global one, otel.GetMeterProvider(). nil is an error.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return errNil("meter provider")
		}
		c.mp = mp
		return nil
	}
}

// WithPropagator sets what puts trace context into the requests to the
// API, such as propagation.TraceContext{} for W3C traceparent. The default
// is the global one, otel.GetTextMapPropagator(), which propagates nothing
// until the program sets one. nil is an error.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) error {
		if p == nil {
			return errNil("propagator")
		}
		c.propagator = p
		return nil
	}
}

// errNil is the error of an option given nil.
func errNil(what string) error { return errors.New("synthient/otel: the " + what + " is nil") }

// NewObserver returns an Observer with opts applied. It returns an error
// for an invalid option, or when the meter refuses an instrument.
func NewObserver(opts ...Option) (*Observer, error) {
	c := config{tp: otel.GetTracerProvider(), mp: otel.GetMeterProvider(), propagator: otel.GetTextMapPropagator()}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&c); err != nil {
			return nil, err
		}
	}
	meter := c.mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version), metric.WithSchemaURL(SchemaURL))
	m, err := newInstruments(meter)
	if err != nil {
		return nil, err
	}
	tracer := c.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version), trace.WithSchemaURL(SchemaURL))
	return &Observer{tracer: tracer, propagator: c.propagator, m: m,
		ops: &memo[opKey, *opInfo]{build: newOpInfo}, routes: &memo[routeKey, *routeInfo]{build: newRouteInfo}}, nil
}

// callState is what an Observer keeps of a call: the call's context, with
// its span, that StartCall returns. A call's events come one at a time,
// on one goroutine.
type callState struct {
	context.Context
	info *opInfo
	span trace.Span
	// answer is the duration point of the request whose answer the call
	// took (when hasAnswer), kept until the call is done with the body
	// (the next request of the call starts, or the call ends), so that a
	// failure reading or decoding it is on the point.
	answer    durationPoint
	hasAnswer bool
	// attrs is room for the attributes of the call's end: those of a
	// call that failed (synthient.attempts, synthient.stop_reason,
	// synthient.request_id, error.type); more go to the heap.
	attrs [4]attribute.KeyValue
}

// Value returns the callState for callKey, else the value of its context.
func (cs *callState) Value(key any) any {
	if key == (callKey{}) {
		return cs
	}
	return cs.Context.Value(key)
}

// durationPoint is a measurement of http.client.request.duration to
// record.
type durationPoint struct {
	ctx     context.Context // the request's
	seconds float64
	route   *routeInfo
	point   pointKey
}

// requestState is what an Observer keeps of a request: the request's
// context, with its span, that StartRequest returns.
type requestState struct {
	context.Context
	call  *callState
	route *routeInfo
	span  trace.Span
	start time.Time
	opts  [2]trace.SpanStartOption // of the span: its kind and attributes
	// attrs is room for the span's attributes: at its start, those of the
	// first attempt to the API (the method, server.address, server.port,
	// url.scheme, url.template, url.full); at its end, those of a failed
	// one (the status code, the protocol version, error.type, the
	// decision, the request id, the stop reason). More go to the heap.
	attrs [6]attribute.KeyValue
}

// Value returns the requestState for requestKey, else the value of its
// context.
func (rs *requestState) Value(key any) any {
	if key == (requestKey{}) {
		return rs
	}
	return rs.Context.Value(key)
}

type callKey struct{}
type requestKey struct{}

// StartCall starts the call's span.
func (o *Observer) StartCall(ctx context.Context, s synthient.CallStart) context.Context {
	cs := &callState{info: o.ops.get(opKey{op: s.Operation, class: s.Class})}
	cs.Context, cs.span = o.tracer.Start(ctx, cs.info.name, cs.info.start...)
	return cs
}

// StartRequest starts the request's client span below the call's, and
// puts the trace context into the header of a request to the API.
func (o *Observer) StartRequest(ctx context.Context, r synthient.RequestStart) context.Context {
	cs, ok := ctx.Value(callKey{}).(*callState)
	if !ok {
		return ctx
	}
	o.recordAnswer(cs, "") // the call is done with the answer before
	rs := &requestState{call: cs, route: o.route(r)}
	attrs := append(append(rs.attrs[:0], rs.route.attrs...), semconv.URLFull(r.URL))
	if r.Attempt > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(r.Attempt-1))
	}
	rs.opts = [2]trace.SpanStartOption{clientKind, trace.WithAttributes(attrs...)}
	rs.Context, rs.span = o.tracer.Start(ctx, rs.route.name, rs.opts[:]...)
	if r.Header != nil {
		o.propagator.Inject(rs.Context, headerCarrier(r.Header))
	}
	rs.start = time.Now()
	return rs
}

// route returns what the requests like r share.
func (o *Observer) route(r synthient.RequestStart) *routeInfo {
	if origin, ok := origin(r.URL); ok {
		return o.routes.get(routeKey{method: r.Method, route: r.Route, origin: origin})
	}
	_, info := newRouteInfo(routeKey{method: r.Method, route: r.Route, origin: r.URL})
	return info
}

// serverAttrs returns the attributes of a request to rawURL with method
// that both its span and its duration have.
func serverAttrs(method, rawURL string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(method)}
	u, err := url.Parse(rawURL)
	if err != nil {
		return attrs
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 443
		if u.Scheme == "http" {
			port = 80
		}
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	return append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port), semconv.URLScheme(u.Scheme))
}

// EndRequest ends the request's span and records its duration; a retry's
// wait becomes an event of the call's span.
func (o *Observer) EndRequest(ctx context.Context, e synthient.RequestEnd) {
	rs, ok := ctx.Value(requestKey{}).(*requestState)
	if !ok {
		return
	}
	point := pointKey{status: e.Status, proto: e.ProtocolVersion, errType: requestErrorType(e)}
	attrs := rs.attrs[:0]
	if e.Status != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(e.Status))
	}
	if e.ProtocolVersion != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(e.ProtocolVersion))
	}
	switch {
	case e.Status >= 400:
		// The conventions: no description the status code implies.
		attrs = append(attrs, semconv.ErrorTypeKey.String(point.errType))
		rs.span.SetStatus(codes.Error, "")
	case point.errType != "":
		attrs = append(attrs, semconv.ErrorTypeKey.String(point.errType))
		rs.span.SetStatus(codes.Error, point.errType)
	}
	rs.span.SetAttributes(appendDecision(attrs, e)...)
	rs.span.End()
	seconds := time.Since(rs.start).Seconds()
	if taken(e) {
		// Recorded once the call is done with the body.
		rs.call.answer, rs.call.hasAnswer = durationPoint{ctx: ctx, seconds: seconds, route: rs.route, point: point}, true
	} else {
		o.m.duration.Record(ctx, seconds, rs.route.durations.get(point)...)
	}

	info := rs.call.info
	if e.Status == 429 {
		o.m.rateLimited.Add(ctx, 1, info.opOnly...)
	}
	if d := e.Decision; d.Retry {
		wait := []attribute.KeyValue{attrWait.Float64(d.Wait.Seconds()), attrWaitCause.String("backoff"), attrAttempt.Int(d.Attempt)}
		if d.HasRetryAfter {
			wait[1] = attrWaitCause.String("retry_after")
			wait = append(wait, attrRetryAfter.Float64(d.RetryAfter.Seconds()))
		}
		rs.call.span.AddEvent("synthient.retry.wait", trace.WithAttributes(wait...))
		o.m.retries.Add(ctx, 1, metric.WithAttributes(info.op, attrRetryWhy.String(retryReason(e))))
	}
}

// taken reports whether the request's answer is what the call takes (a
// 2xx, or a download's 307), whose body the call reads next.
func taken(e synthient.RequestEnd) bool {
	return e.Status > 0 && e.Status < 400 && !e.Decision.Retry && e.Decision.Reason == ""
}

// recordAnswer records the duration point of the answer the call took, if
// any, with errType as its error.type ("" for none).
func (o *Observer) recordAnswer(cs *callState, errType string) {
	if !cs.hasAnswer {
		return
	}
	p := cs.answer
	cs.answer, cs.hasAnswer = durationPoint{}, false
	p.point.errType = errType
	o.m.duration.Record(p.ctx, p.seconds, p.route.durations.get(p.point)...)
}

// answerErrorType is the error.type a call that ended with err gives the
// answer it took: that of err (see errorType), unless err is nil or a
// failure of the call's own after the answer was read (a writer or a file
// that failed: "_OTHER").
func answerErrorType(err error) string {
	if err == nil {
		return ""
	}
	if t := errorType(err); t != "_OTHER" {
		return t
	}
	return ""
}

// requestErrorType is the error.type of a request: its status from 400
// on, else the kind of its failure; "" for neither.
func requestErrorType(e synthient.RequestEnd) string {
	if e.Status >= 400 {
		return strconv.Itoa(e.Status)
	}
	return e.ErrorKind
}

// appendDecision appends the SDK's attributes of a request's end to attrs:
// its request id, the decision and the stop reason.
func appendDecision(attrs []attribute.KeyValue, e synthient.RequestEnd) []attribute.KeyValue {
	decision := "done"
	switch {
	case e.Decision.Retry:
		decision = "retry"
	case e.Decision.Reason != "":
		decision = "stop"
	}
	attrs = append(attrs, attrDecision.String(decision))
	if e.RequestID != "" {
		attrs = append(attrs, attrRequestID.String(e.RequestID))
	}
	if e.Decision.Reason != "" {
		attrs = append(attrs, attrStopReason.String(string(e.Decision.Reason)))
	}
	return attrs
}

// retryReason is why a request is sent again.
func retryReason(e synthient.RequestEnd) string {
	switch {
	case e.Status == 429:
		return "rate_limited"
	case e.Status >= 500:
		return "server_error"
	case e.ErrorKind == "timeout":
		return "timeout"
	}
	return "connection"
}

// Hold adds a pacing hold to the call's span as an event, and counts it.
// A hold that the context cut short was counted when it began.
func (o *Observer) Hold(ctx context.Context, h synthient.PacingHold) {
	cs, ok := ctx.Value(callKey{}).(*callState)
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{attrBucket.String(h.Bucket), attrWait.Float64(h.Wait.Seconds()), attrAttempt.Int(h.Attempt)}
	metricAttrs := []attribute.KeyValue{cs.info.op, attrBucket.String(h.Bucket)}
	if h.Stop != "" {
		attrs = append(attrs, attrStopReason.String(string(h.Stop)))
		metricAttrs = append(metricAttrs, attrStopReason.String(string(h.Stop)))
	}
	cs.span.AddEvent("synthient.pacing.hold", trace.WithAttributes(attrs...))
	if h.Stop != retry.ContextDone {
		o.m.holds.Add(ctx, 1, metric.WithAttributes(metricAttrs...))
	}
}

// EndCall ends the call's span, its status from the call's error, and
// counts the call and the bytes it downloaded.
func (o *Observer) EndCall(ctx context.Context, e synthient.CallEnd) {
	cs, ok := ctx.Value(callKey{}).(*callState)
	if !ok {
		return
	}
	info := cs.info
	attrs := append(cs.attrs[:0], attrAttempts.Int(e.Attempts))
	if e.StopReason != "" {
		attrs = append(attrs, attrStopReason.String(string(e.StopReason)))
	}
	if e.RequestID != "" {
		attrs = append(attrs, attrRequestID.String(e.RequestID))
	}
	if e.Bytes > 0 {
		attrs = append(attrs, attrBytes.Int64(e.Bytes))
		o.m.downloaded.Add(ctx, e.Bytes, info.opOnly...)
	}
	o.recordAnswer(cs, answerErrorType(e.Err))
	attrs = o.cacheCounts(ctx, info, e, attrs)
	attrs = o.creditCounts(ctx, info, e, attrs)
	outcome := info.ok
	if e.Err != nil {
		errType := semconv.ErrorTypeKey.String(errorType(e.Err))
		attrs = append(attrs, errType)
		cs.span.SetStatus(codes.Error, e.Err.Error())
		outcome = []metric.AddOption{metric.WithAttributes(info.op, attrOutcome.String("error"), errType)}
	}
	cs.span.SetAttributes(attrs...)
	cs.span.End()
	o.m.calls.Add(ctx, 1, outcome...)
}

// creditCounts records what the call drew on the client's credit budget:
// counters, and span attributes appended to attrs, each when not zero.
func (o *Observer) creditCounts(ctx context.Context, info *opInfo, e synthient.CallEnd, attrs []attribute.KeyValue) []attribute.KeyValue {
	for _, c := range []struct {
		n    int64
		key  attribute.Key
		inst metric.Int64Counter
	}{
		{e.CreditsReserved, attrReserved, o.m.reserved},
		{e.CreditsSpent, attrSpent, o.m.spent},
		{e.CreditsRefunded, attrRefunded, o.m.refunded},
		{e.CreditsRefused, attrRefused, o.m.refused},
	} {
		if c.n > 0 {
			attrs = append(attrs, c.key.Int64(c.n))
			c.inst.Add(ctx, c.n, info.opOnly...)
		}
	}
	return attrs
}

// cacheCounts records what the client's cache and the shared requests did
// for the call: counters, and span attributes appended to attrs, each
// when not zero.
func (o *Observer) cacheCounts(ctx context.Context, info *opInfo, e synthient.CallEnd, attrs []attribute.KeyValue) []attribute.KeyValue {
	if e.CacheHits > 0 {
		attrs = append(attrs, attrCacheHits.Int(e.CacheHits))
		o.m.cacheHits.Add(ctx, int64(e.CacheHits), info.opOnly...)
	}
	if e.Coalesced {
		attrs = append(attrs, attrCoalesced.Bool(true))
		o.m.coalesced.Add(ctx, 1, info.opOnly...)
	}
	if e.CreditsSaved > 0 {
		attrs = append(attrs, attrSaved.Int(e.CreditsSaved))
		o.m.saved.Add(ctx, int64(e.CreditsSaved), info.opOnly...)
	}
	if e.CacheErr != nil {
		o.m.cacheErrors.Add(ctx, 1, info.opOnly...)
	}
	return attrs
}
