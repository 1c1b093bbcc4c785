package otel

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/synthient-go/synthient/retry"
)

// memoSize bounds each memo: past it, a value is built for each use and
// not kept, so that keys the SDK does not bound (server addresses) cannot
// grow one without end.
const memoSize = 64

// memo keeps the values that build makes from their keys: the attribute
// sets, options and names an Observer would otherwise make for each call.
// build returns the key to keep, which must equal the one given (a copy
// that does not share memory with a larger string), and the value. Reads
// take no lock; a miss copies the map. It is safe for concurrent use once
// build is set, and must not be copied after its first use.
type memo[K comparable, V any] struct {
	build func(K) (K, V)
	mu    sync.Mutex // held to add a key
	m     atomic.Pointer[map[K]V]
}

// get returns the value kept for k, building and keeping it on a miss.
func (c *memo[K, V]) get(k K) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	k, v := c.build(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old == nil {
		old = &map[K]V{}
	}
	if len(*old) >= memoSize {
		return v
	}
	if kept, ok := (*old)[k]; ok {
		return kept // another goroutine built it first
	}
	m := make(map[K]V, len(*old)+1)
	maps.Copy(m, *old)
	m[k] = v
	c.m.Store(&m)
	return v
}

// headerKeys are the canonical forms of the header keys a propagator sets
// ("traceparent" is "Traceparent"), which net/http's canonicalisation
// would allocate for each request.
var headerKeys = memo[string, string]{build: func(k string) (string, string) {
	k = strings.Clone(k)
	return k, http.CanonicalHeaderKey(k)
}}

// headerCarrier is propagation.HeaderCarrier with the keys it sets
// canonicalised once (see headerKeys): a propagator writes into the
// header of the request.
type headerCarrier http.Header

// Get returns the first value of key.
func (h headerCarrier) Get(key string) string { return http.Header(h).Get(key) }

// Set sets key to value, replacing the values it had.
func (h headerCarrier) Set(key, value string) { h[headerKeys.get(key)] = []string{value} }

// Keys returns the keys of the header.
func (h headerCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

// Options that do not change from call to call.
var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	clientKind   = trace.WithSpanKind(trace.SpanKindClient)
)

// opKey names the operations whose opInfo an Observer keeps.
type opKey struct {
	op    string
	class retry.Class
}

// opInfo is what the spans and metrics of the calls of one operation
// share. The options of a measurement are kept as a slice, to be passed
// on as they are: an option passed alone to an instrument's variadic
// parameter would be a slice allocated for each measurement.
type opInfo struct {
	name   string                  // of the call's span: "synthient.LookupIP"
	start  []trace.SpanStartOption // of the call's span: its kind and attributes
	op     attribute.KeyValue      // synthient.operation
	opOnly []metric.AddOption      // synthient.operation alone
	ok     []metric.AddOption      // of synthient.client.calls, for a call that succeeded
}

// newOpInfo builds the opInfo of k, for an Observer's memo.
func newOpInfo(k opKey) (opKey, *opInfo) {
	k.op = strings.Clone(k.op)
	op := attrOperation.String(k.op)
	return k, &opInfo{
		name:   "synthient." + k.op,
		start:  []trace.SpanStartOption{internalKind, trace.WithAttributes(op, attrClass.String(k.class.String()))},
		op:     op,
		opOnly: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(op))},
		ok:     []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(op, attrOutcome.String("ok")))},
	}
}

// routeKey names the requests whose routeInfo an Observer keeps: by
// method, route template and origin (the URL's scheme and authority).
type routeKey struct {
	method, route, origin string
}

// routeInfo is what the spans and duration points of the requests of one
// routeKey share.
type routeInfo struct {
	name   string               // of the client span: "GET /lookup/ip/{ip}"
	attrs  []attribute.KeyValue // of the client span at its start but url.full and the resend count
	server []attribute.KeyValue // of the duration: the method, server and scheme
	// durations are the options of the duration points, by what the
	// request's end adds to server.
	durations memo[pointKey, []metric.RecordOption]
}

// pointKey is what a duration point adds to its route's attributes.
type pointKey struct {
	status         int    // http.response.status_code; 0 for none
	proto, errType string // network.protocol.version, error.type; "" for none
}

// newRouteInfo builds the routeInfo of k, for an Observer's memo; a k
// whose origin is a whole URL without an authority gives the attributes
// url.Parse finds in it.
func newRouteInfo(k routeKey) (routeKey, *routeInfo) {
	k = routeKey{method: strings.Clone(k.method), route: strings.Clone(k.route), origin: strings.Clone(k.origin)}
	r := &routeInfo{name: k.method, server: serverAttrs(k.method, k.origin)}
	r.attrs = slices.Clip(r.server)
	if k.route != "" {
		r.name += " " + k.route
		r.attrs = append(r.attrs, semconv.URLTemplate(k.route))
	}
	r.durations.build = r.newPoint
	return k, r
}

// newPoint returns the option of a duration point of the route with what
// k adds.
func (r *routeInfo) newPoint(k pointKey) (pointKey, []metric.RecordOption) {
	attrs := slices.Clip(r.server)
	if k.status != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(k.status))
	}
	if k.proto != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(k.proto))
	}
	if k.errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.errType))
	}
	k.proto, k.errType = strings.Clone(k.proto), strings.Clone(k.errType)
	return k, []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
}

// origin returns the scheme and authority of rawURL ("https://host:443"),
// and false for a URL without an authority.
func origin(rawURL string) (string, bool) {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", false
	}
	end := len(rawURL) - len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return rawURL[:end+i], true
	}
	return rawURL, true
}
