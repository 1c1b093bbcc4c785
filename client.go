package synthient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/synthient-go/synthient/internal/flight"
	"github.com/synthient-go/synthient/internal/transport"
	"github.com/synthient-go/synthient/retry"
)

// DefaultBaseURL is the base URL of the Synthient API, including the
// version prefix.
const DefaultBaseURL = "https://api.synthient.com/api/v4"

// Version is the version of this module, sent in the User-Agent header.
const Version = "0.1.0"

// Defaults of the options.
const (
	DefaultMaxRetries    = retry.DefaultMaxRetries
	DefaultTimeout       = 30 * time.Second
	DefaultOpenTimeout   = 5 * time.Second
	DefaultBackoffBase   = retry.DefaultBase
	DefaultBackoffMax    = retry.DefaultMax
	DefaultMaxRetryAfter = retry.DefaultMaxRetryAfter
)

// Client calls the Synthient API. Create one with NewClient and share it:
// a Client is safe for concurrent use by multiple goroutines, and reuses
// its connections across calls.
//
// Each method applies the retry class of its operation (see the package
// documentation); none sets an overall deadline, which is the caller's
// ctx.
type Client struct {
	// apiKey returns the X-Api-Key header value, one slice shared by every
	// request (see newRequest). The key sits in a
	// closure, not a field, so that no dump of a Client prints it: not fmt
	// on an unexported field or with a bad verb (where Format is not
	// called), not reflection, not spew.
	apiKey    func() []string
	base      string   // base URL without a trailing slash
	baseURL   *url.URL // parsed base, for the origin checks of downloads
	hc        *http.Client
	owned     *http.Transport // nil when the caller gave the transport
	userAgent []string        // the User-Agent header value, shared (see newRequest)
	logger    *slog.Logger
	hook      func(*ResponseInfo) error
	observer  Observer              // nil without one
	policy    retry.Policy          // retry settings; the class is set per operation
	pacer     *pacer                // the rate-limit models; nil without pacing
	rc        *retryablehttp.Client // sends every call's attempts (newRetryClient)
	closed    atomic.Bool
	streams   openStreams // the streams open, which Close ends

	cache         *lookupCache // nil without WithCache
	budget        CreditBudget // nil without WithCreditBudget
	ipFlights     flight.Group[*IPLookup]
	domainFlights flight.Group[*DomainLookup]
}

// Option configures a Client. An invalid value makes NewClient return an
// error matching ErrInvalidArgument; an Option never panics.
type Option func(*settings) error

type settings struct {
	baseURL       string
	maxRetries    int
	timeout       time.Duration
	openTimeout   time.Duration
	backoffBase   time.Duration
	backoffMax    time.Duration
	maxRetryAfter time.Duration
	maxTotalDelay time.Duration
	transport     http.RoundTripper
	tlsConfig     *tls.Config
	userAgent     string
	logger        *slog.Logger
	hook          func(*ResponseInfo) error
	observer      Observer
	rand          func() float64
	quota         *retry.Quota
	noQuota       bool
	noPacing      bool
	cache         Cache
	budget        CreditBudget
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("synthient: %w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// WithBaseURL sets the API's base URL: an absolute http or https URL
// including the /api/v4 prefix, without user info, query or fragment.
// The default is DefaultBaseURL. The API key is sent only to this origin.
func WithBaseURL(rawURL string) Option {
	return func(s *settings) error {
		u, err := url.Parse(rawURL)
		if err != nil {
			return invalid("base URL does not parse")
		}
		switch {
		case u.Scheme != "http" && u.Scheme != "https":
			return invalid("base URL must be http or https, not %q", u.Scheme)
		case u.Host == "" || u.Hostname() == "":
			return invalid("base URL has no host")
		case u.User != nil:
			return invalid("base URL must not hold user info")
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			return invalid("base URL must not hold a query or fragment")
		}
		s.baseURL = rawURL
		return nil
	}
}

// WithMaxRetries sets how many times a failed request may be sent again
// after the first attempt, where its retry class allows it. Zero turns
// retrying off; a negative value is an error; more than 16 is read as 16.
// The default is 2.
func WithMaxRetries(n int) Option {
	return func(s *settings) error {
		if n < 0 {
			return invalid("max retries must not be negative, got %d", n)
		}
		s.maxRetries = min(n, retry.MaxRetriesCap)
		return nil
	}
}

// WithTimeout bounds each wait for a read or a write on a connection:
// waiting for the response headers after the request was written, and
// each read of a body or stream. It is not a bound on the whole call (a
// stream that gets a heartbeat line every 15 s lives on); that is the
// caller's ctx. The default is 30 s; d must be positive. It applies to the
// client's own transport, not to one given with WithTransport.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return invalid("timeout must be positive, got %v", d)
		}
		s.timeout = d
		return nil
	}
}

// WithOpenTimeout bounds each wait for a connection: the dial, and the TLS
// handshake with it. The default is 5 s; d must be positive. It applies to
// the client's own transport, not to one given with WithTransport.
func WithOpenTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return invalid("open timeout must be positive, got %v", d)
		}
		s.openTimeout = d
		return nil
	}
}

// WithBackoff sets the exponential backoff: the wait before retry k is
// drawn from [0.75*b, b] with b = min(base*2^k, max). The defaults are 1 s
// and 30 s. base must be positive and max at least base. A Retry-After
// from the server is always waited out in full, whatever the backoff.
func WithBackoff(base, max time.Duration) Option {
	return func(s *settings) error {
		if base <= 0 || max < base {
			return invalid("backoff needs 0 < base <= max, got %v and %v", base, max)
		}
		s.backoffBase, s.backoffMax = base, max
		return nil
	}
}

// WithMaxRetryAfter sets the longest Retry-After that is waited out. A
// response asking for a longer wait is returned at once as an *APIError
// with RetryAfter set, whatever the retry count. The default is 60 s; d
// must be positive.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return invalid("max Retry-After must be positive, got %v", d)
		}
		s.maxRetryAfter = d
		return nil
	}
}

// WithRetryBudget bounds the total time one call spends waiting between
// attempts: retrying stops (retry.BudgetExhausted) when the next wait would
// make the waits add up to more than d. The default is no budget; d must
// be positive.
func WithRetryBudget(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return invalid("retry budget must be positive, got %v", d)
		}
		s.maxTotalDelay = d
		return nil
	}
}

// WithRandom sets the source of the backoff's jitter: a function returning
// a draw in [0, 1]. An unusable draw means the longest wait. The default is
// math/rand/v2. fn must be safe for concurrent use; nil is an error.
func WithRandom(fn func() float64) Option {
	return func(s *settings) error {
		if fn == nil {
			return invalid("random source is nil")
		}
		s.rand = fn
		return nil
	}
}

// WithRetryQuota sets the client-wide retry quota, a token bucket shared
// by every call of the client: a retry after a 5xx, a timeout or a network
// failure takes failureCost tokens, one after a 429 with a usable
// Retry-After throttleCost; a call that succeeds after retrying gives its
// last retry's tokens back, one that succeeds at once adds
// retry.SuccessCredit. When the bucket lacks the tokens a call stops
// retrying at once with retry.QuotaExhausted and its last error, so during
// an outage the client sends at most capacity/failureCost retries in all,
// however many calls are made. The default is 500 tokens, 10 per failure
// retry and none per 429 retry: waiting out the server's Retry-After is
// the server pacing the client, which multiplies nothing. capacity and
// failureCost must be positive, throttleCost zero (free) or positive.
func WithRetryQuota(capacity, failureCost, throttleCost int) Option {
	return func(s *settings) error {
		if capacity <= 0 || failureCost <= 0 || throttleCost < 0 {
			return invalid("retry quota needs positive capacity and failure cost and a throttle cost of at least 0, got %d, %d and %d",
				capacity, failureCost, throttleCost)
		}
		s.quota, s.noQuota = retry.NewQuota(capacity, failureCost, throttleCost), false
		return nil
	}
}

// WithoutRetryQuota turns the client-wide retry quota off: every call then
// retries as far as its class, MaxRetries and the waits allow.
func WithoutRetryQuota() Option {
	return func(s *settings) error {
		s.quota, s.noQuota = nil, true
		return nil
	}
}

// WithoutPacing turns rate-limit pacing off. By default a client learns
// the state of each of the API's rate limits from the RateLimit-Limit,
// -Remaining and -Reset headers of its answers, and holds a request while
// the limit it counts against is known to be spent, instead of sending it
// into a 429; a hold that would pass the context's deadline stops the
// call at once with an error matching ErrRateLimitHold. Without pacing
// every request goes out at once, and only a 429's Retry-After slows a
// call. See docs/retries.md.
func WithoutPacing() Option {
	return func(s *settings) error {
		s.noPacing = true
		return nil
	}
}

// WithTransport sends every request through rt, for proxies, tracing or
// tests. The client then does not apply Timeout and OpenTimeout (rt owns
// its connections) and Close leaves rt's connections alone. The client
// still never follows redirects on JSON endpoints and still makes billed
// requests non-replayable. nil is an error.
//
// rt also carries the request to the export storage host, with the call's
// context: a tracing transport that injects trace context (otelhttp's)
// sends it there too. For traces, prefer WithObserver, which never does.
func WithTransport(rt http.RoundTripper) Option {
	return func(s *settings) error {
		if rt == nil {
			return invalid("transport is nil")
		}
		s.transport = rt
		return nil
	}
}

// WithTLSConfig sets the TLS configuration of the client's own transport,
// for example a private root CA. It is cloned; its NextProtos is replaced
// (the client speaks HTTP/1.1). nil is an error.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(s *settings) error {
		if cfg == nil {
			return invalid("TLS config is nil")
		}
		s.tlsConfig = cfg.Clone()
		return nil
	}
}

// WithUserAgent appends s to the User-Agent header, which is
// "synthient-go/<version>" by default. s must be printable ASCII.
func WithUserAgent(ua string) Option {
	return func(s *settings) error {
		for i := 0; i < len(ua); i++ {
			if ua[i] < 0x20 || ua[i] > 0x7e {
				return invalid("user agent must be printable ASCII")
			}
		}
		s.userAgent = strings.TrimSpace(ua)
		return nil
	}
}

// WithLogger logs each attempt's retry decision to l as one structured
// event: at Debug for a retry or a success, at Info for a final stop. The
// events hold the method, the route template, the class, the attempt and
// its maximum, the status or error kind, the parsed Retry-After, the
// chosen wait, the time left before the deadline, the decision and the
// stop reason; never the API key, a header or a URL's query. nil (the
// default) logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		s.logger = l
		return nil
	}
}

// WithResponseHook calls fn for every response from the API: each attempt,
// and the 307 of a download; never for the export storage host. An error
// fn returns ends the call and is returned unchanged. fn must be safe for
// concurrent use. The header copy in ResponseInfo can hold a presigned
// storage URL (a download's Location): treat it as a secret.
func WithResponseHook(fn func(*ResponseInfo) error) Option {
	return func(s *settings) error {
		s.hook = fn
		return nil
	}
}

// ResponseInfo describes one response from the API, for a response hook.
type ResponseInfo struct {
	// Status is the HTTP status code.
	Status int
	// RequestID is the X-Request-Id header.
	RequestID string
	// RateLimit is the team's rate-limit state; nil when the response has no
	// RateLimit-* headers (as /health).
	RateLimit *RateLimit
	// Header is a copy of the response header.
	Header http.Header
}

// RateLimit is the state of a rate limit, from the RateLimit-Limit,
// RateLimit-Remaining and RateLimit-Reset headers, each read as digits. A
// header that is absent or malformed (a sign, a fraction, text) leaves its
// field zero; a number too large for the field gives the field's largest
// value.
type RateLimit struct {
	Limit, Remaining int
	// Reset is the time until the window resets.
	Reset time.Duration
}

func newResponseInfo(resp *http.Response) *ResponseInfo {
	return &ResponseInfo{
		Status:    resp.StatusCode,
		RequestID: resp.Header.Get("X-Request-Id"),
		RateLimit: parseRateLimit(resp.Header),
		Header:    headerCopy(resp.Header),
	}
}

func parseRateLimit(h http.Header) *RateLimit {
	limit, okL := headerInt(h, "Ratelimit-Limit")
	remaining, okR := headerInt(h, "Ratelimit-Remaining")
	reset, okS := headerInt(h, "Ratelimit-Reset")
	if !okL && !okR && !okS {
		return nil
	}
	return &RateLimit{Limit: limit, Remaining: remaining, Reset: resetDuration(reset)}
}

// resetDuration returns a RateLimit-Reset of seconds as a Duration,
// saturating rather than overflowing.
func resetDuration(seconds int) time.Duration {
	if seconds > int(math.MaxInt64/int64(time.Second)) {
		return math.MaxInt64
	}
	return time.Duration(seconds) * time.Second
}

// headerInt reads a header of digits (after trimming spaces) as a
// non-negative int, saturating at the largest int; ok reports that the
// header is present. A malformed value reads as 0.
func headerInt(h http.Header, key string) (int, bool) {
	v, ok := h[key]
	if !ok || len(v) == 0 {
		return 0, false
	}
	d := strings.Trim(v[0], " \t")
	if d == "" {
		return 0, true
	}
	n := 0
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, true
		}
		if n > (math.MaxInt-9)/10 {
			n = math.MaxInt
			continue
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// NewClient returns a client that authenticates with apiKey. It does no
// I/O. An empty or malformed key, or an invalid option, gives an error
// matching ErrInvalidArgument; the error never holds the key.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	if err := checkAPIKey(apiKey); err != nil {
		return nil, err
	}
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(strings.TrimRight(s.baseURL, "/"))
	if err != nil { // WithBaseURL checked it; DefaultBaseURL parses
		return nil, invalid("base URL does not parse")
	}
	key := []string{apiKey} // one header value for every request (see newRequest)
	c := &Client{
		apiKey:  func() []string { return key },
		base:    base.String(),
		baseURL: base,

		logger:   s.logger,
		hook:     s.hook,
		observer: s.observer,
		budget:   s.budget,
		policy: retry.Policy{
			MaxRetries:    s.maxRetries,
			Base:          s.backoffBase,
			Max:           s.backoffMax,
			MaxRetryAfter: s.maxRetryAfter,
			MaxTotalDelay: s.maxTotalDelay,
			Rand:          s.rand,
			Quota:         s.quota,
		},
	}
	ua := "synthient-go/" + Version
	if s.userAgent != "" {
		ua += " " + s.userAgent
	}
	c.userAgent = []string{ua}
	c.cache = newLookupCache(s.cache, s.logger)
	if !s.noPacing {
		c.pacer = newPacer(s.maxRetryAfter)
	}
	rt := s.transport
	if rt == nil {
		c.owned = transport.New(s.timeout, s.openTimeout, s.tlsConfig)
		rt = c.owned
	}
	c.hc = newHTTPClient(rt)
	c.rc = newRetryClient(c.hc, c.policy.Retries())
	return c, nil
}

// checkAPIKey refuses an empty key, or one holding white space or a byte
// that is not printable ASCII. Its errors never hold the key.
func checkAPIKey(apiKey string) error {
	if apiKey == "" {
		return invalid("API key is empty")
	}
	for i := 0; i < len(apiKey); i++ {
		if apiKey[i] <= 0x20 || apiKey[i] > 0x7e {
			return invalid("API key holds white space or a character that is not printable ASCII")
		}
	}
	return nil
}

// newSettings returns the defaults with opts applied; a nil Option is
// skipped.
func newSettings(opts []Option) (settings, error) {
	s := settings{
		baseURL:       DefaultBaseURL,
		maxRetries:    DefaultMaxRetries,
		timeout:       DefaultTimeout,
		openTimeout:   DefaultOpenTimeout,
		backoffBase:   DefaultBackoffBase,
		backoffMax:    DefaultBackoffMax,
		maxRetryAfter: DefaultMaxRetryAfter,
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&s); err != nil {
			return settings{}, err
		}
	}
	if s.quota == nil && !s.noQuota {
		s.quota = retry.NewQuota(retry.DefaultQuotaCapacity, retry.DefaultFailureCost, retry.DefaultThrottleCost)
	}
	return s, nil
}

// String describes the client by its base URL, as
// "synthient.Client(https://api.synthient.com/api/v4)". It never holds the
// API key, so a client is safe to print or log.
func (c *Client) String() string {
	if c == nil {
		return "synthient.Client(nil)"
	}
	return "synthient.Client(" + c.base + ")"
}

// GoString returns String, so that %#v does not dump the client's fields.
func (c *Client) GoString() string { return c.String() }

// Format writes String for every verb and flag (%v, %+v, %#v, %s, %q,
// %x...): fmt never prints the client's fields, and with them the API
// key.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// LogValue makes slog.Any(key, c) log the base URL alone, never the API
// key.
func (c *Client) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(slog.String("base_url", c.base))
}

// Close closes the client. Calls made after Close fail with an error
// matching ErrClosed and send nothing. Close is safe to call more than
// once, and concurrently with calls; it returns nil.
//
// A call in progress at Close is not interrupted, except a stream: the
// request it is making goes on to its answer, with its retries, and the
// call returns as it would have without Close (a billed lookup answered
// after Close returns its result: the credits it cost are not lost). A request
// it would start as a new step after Close (the next page of an
// AllExports loop, the API leg of a download after its meta) fails with
// ErrClosed. A stream open at Close (StreamRaw and the Stream methods)
// ends at once, its connection closed: no event is yielded after Close
// returns, and the loop's last error matches ErrClosed.
//
// Close closes the idle connections of the client's own transport at
// once, and the connection of each call in progress when that call is
// done with it: once Close has returned and the calls in progress have
// ended, the client has no connection open. Those of a transport given
// with WithTransport are the transport's: Close leaves them alone.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.streams.close()
	if c.owned != nil {
		c.owned.CloseIdleConnections()
	}
	return nil
}

// closeIdleIfClosed closes the idle connections of the client's own
// transport once the client is closed. A call runs it when it is done
// with a response, after its body was closed, so that the connection a
// call in progress at Close handed back to the pool is closed as well.
// (Each run also makes net/http close a connection that turns idle
// later, such as one whose dial ended after the call it was for: it does
// so until a request asks for a connection, which after Close only a call
// in progress does, and that call runs this again when it is done.)
func (c *Client) closeIdleIfClosed() {
	if c.owned != nil && c.closed.Load() {
		c.owned.CloseIdleConnections()
	}
}

// openStreams is the streams of a client that are open, so that Close
// ends them. It is safe for concurrent use; its zero value is ready.
type openStreams struct {
	mu     sync.Mutex
	closed bool
	open   map[*openStream]struct{}
}

// openStream is one stream of openStreams.
type openStream struct{ cancel context.CancelCauseFunc }

// start returns ctx for a stream that Close ends (cancelling it with
// ErrClosed as its cause), and the func that forgets it, to call when the
// stream ends. ok is false, and nothing is started, once the client is
// closed.
func (s *openStreams) start(ctx context.Context) (_ context.Context, end func(), ok bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	st := &openStream{cancel: cancel}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cancel(ErrClosed)
		return ctx, func() {}, false
	}
	if s.open == nil {
		s.open = map[*openStream]struct{}{}
	}
	s.open[st] = struct{}{}
	return ctx, func() {
		s.mu.Lock()
		delete(s.open, st)
		s.mu.Unlock()
		cancel(nil)
	}, true
}

// close ends every stream open, and every one started later.
func (s *openStreams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for st := range s.open {
		st.cancel(ErrClosed)
	}
	clear(s.open)
}

// endedByClose reports whether ctx, a stream's context from
// openStreams.start, was ended by Close.
func endedByClose(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrClosed)
}
