package synthienttest

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient"
)

// The route templates that Inject and Arrivals take, and that Request.Route
// holds. RouteStorage names the export storage host; the empty route is any
// path the fake does not know.
const (
	RouteHealth       = "/health"
	RouteAccount      = "/account/me"
	RouteLookupIP     = "/lookup/ip/{ip}"
	RouteLookupIPs    = "/lookup/ips"
	RouteLookupDomain = "/lookup/domain/{domain}"
	RouteExports      = "/feeds/{feed}/export"
	RouteExportMeta   = "/feeds/{feed}/export/{id}/meta"
	RouteDownload     = "/feeds/{feed}/export/{id}"
	RouteStream       = "/feeds/{feed}/stream"
	RouteStorage      = "storage"
)

var knownRoutes = map[string]bool{
	RouteHealth: true, RouteAccount: true, RouteLookupIP: true, RouteLookupIPs: true,
	RouteLookupDomain: true, RouteExports: true, RouteExportMeta: true, RouteDownload: true,
	RouteStream: true, RouteStorage: true,
}

// DefaultCredits is the lookup credit balance of Server.APIKey unless
// WithCredits says otherwise.
const DefaultCredits = 50_000

// The stream defaults, as the real API's: a heartbeat blank line every 15 s
// (WithHeartbeat), a clean close after 30 min (WithStreamLifetime), and at
// most 2 open streams per key (WithStreamLimit).
const (
	DefaultHeartbeat      = 15 * time.Second
	DefaultStreamLifetime = 30 * time.Minute
	DefaultStreamLimit    = 2
)

// Server is a fake of the Synthient API v4 and of its export storage host,
// each on its own loopback origin. Create one with NewServer and Close it
// when done. Its methods are safe for concurrent use.
type Server struct {
	// URL is the API's base URL including /api/v4, for synthient.WithBaseURL.
	URL string
	// StorageURL is the origin of the storage host that download redirects
	// point to (no trailing slash).
	StorageURL string
	// APIKey is a valid key with every scope and DefaultCredits credits
	// (see WithCredits).
	APIKey string

	cfg    config
	secret []byte // signs presigned URLs and cursors
	done   chan struct{}

	apiSrv, storageSrv *http.Server
	serving            sync.WaitGroup // the Serve goroutines

	hmu      sync.Mutex // guards closed and the Add of handlers
	closed   bool
	handlers sync.WaitGroup
	conns    sync.WaitGroup // open connections, both origins

	mu       sync.Mutex // guards faults, arrivals, log, unhealthy
	faults   map[string][]*pendingFault
	arrivals map[string]int
	log      []*Request
	sick     []string

	reqSeq    atomic.Uint64
	streamSeq atomic.Uint64

	keysMu sync.Mutex // guards keys and everything in an apiKey
	keys   map[string]*apiKey
	keyN   int

	sumsMu sync.Mutex
	sums   map[string]*sumEntry
}

// Request is one request either origin received, as the fake's log keeps
// it. It never holds an API key, an Authorization or a cookie value, nor a
// presigned URL's signature.
type Request struct {
	// Time is when the request arrived, on the server's clock.
	Time   time.Time
	Method string
	// Route is the route template (RouteLookupIP, ...), RouteStorage, or
	// "" for an unknown path.
	Route string
	// Path is the URL path as sent, without the query.
	Path string
	// Query is the raw query, with X-Amz-Signature, any parameter named
	// like a key (api_key, apikey, key, x-api-key, token) and any value that
	// is one of the server's keys redacted.
	Query string
	// Status is the status answered; 0 while none was written, and for a
	// connection closed without an answer.
	Status int
	// Faulted reports that an injected fault answered the request.
	Faulted bool
	// RequestID is the X-Request-Id the fake answered with.
	RequestID string
	// Header holds the request's User-Agent, Accept and Content-Type
	// headers, when present.
	Header http.Header
	// APIKey, Authorization and Cookie report whether the request carried
	// an X-Api-Key, Authorization or Cookie header (never their values).
	APIKey, Authorization, Cookie bool
}

// Option configures a Server. An invalid value makes NewServer panic, as
// the fake is a test helper.
type Option func(*config)

type config struct {
	now           func() time.Time
	credits       int64
	exportDays    int
	exportSize    func(feed synthient.Feed, id string) int64
	presignExpiry time.Duration
	rateLimits    bool
	rates         map[Bucket]rate
	streamLimit   int
	eventInterval time.Duration
	heartbeat     time.Duration
	lifetime      time.Duration
	maxEvents     int
	httpsDetails  DetailsForm
	listenAddr    string
}

// WithClock sets the server's clock. It dates everything the fake makes
// up (timestamps, export snapshots, the last_seen of lookups), refills the
// rate limiters and ages presigned URLs. Timers that pace streams and
// faults use real time. The default is time.Now. ManualClock is a settable
// clock for tests.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			panic("synthienttest: WithClock(nil)")
		}
		c.now = now
	}
}

// WithCredits sets the lookup credits of Server.APIKey (default
// DefaultCredits). Zero makes every lookup answer 402.
func WithCredits(n int64) Option {
	return func(c *config) {
		if n < 0 {
			panic("synthienttest: negative credits")
		}
		c.credits = n
	}
}

// WithExportDays sets how many previous UTC days have a daily snapshot per
// feed (default 3, at most 3660). The current day always has hourly
// snapshots of its completed hours.
func WithExportDays(n int) Option {
	return func(c *config) {
		if n < 0 || n > 3660 {
			panic("synthienttest: export days outside 0 to 3660")
		}
		c.exportDays = n
	}
}

// WithExportSize sets the size in bytes of every export file (at least 8).
// By default a daily file is 96 to 128 KiB and an hourly one 48 to 64 KiB,
// which keeps tests fast.
func WithExportSize(n int64) Option {
	return func(c *config) {
		if n < 8 {
			panic("synthienttest: export size below 8 bytes")
		}
		c.exportSize = func(synthient.Feed, string) int64 { return n }
	}
}

// WithExportSizeFunc sets the size of each export file by feed and export
// id ("2026-06-09" or "2026-06-10/13"). Sizes below 8 are read as 8. A
// large file (256 MiB for a benchmark) is generated as it is served, never
// held in memory; its checksum is computed once, on first use.
func WithExportSizeFunc(fn func(feed synthient.Feed, id string) int64) Option {
	return func(c *config) {
		if fn == nil {
			panic("synthienttest: WithExportSizeFunc(nil)")
		}
		c.exportSize = fn
	}
}

// WithPresignExpiry sets how long a presigned storage URL is valid,
// measured on the server's clock (default 24 h, at most 7 days).
func WithPresignExpiry(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second || d > 7*24*time.Hour {
			panic("synthienttest: presign expiry outside 1s to 7 days")
		}
		c.presignExpiry = d
	}
}

// WithStreamLimit sets how many streams one key may have open at once
// (default 2); one more is answered 429 without Retry-After.
func WithStreamLimit(n int) Option {
	return func(c *config) {
		if n < 0 {
			panic("synthienttest: negative stream limit")
		}
		c.streamLimit = n
	}
}

// WithEventInterval sets the pause between two stream events (default
// 50 ms). The first event is sent as soon as the stream opens.
func WithEventInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("synthienttest: event interval must be positive")
		}
		c.eventInterval = d
	}
}

// WithHeartbeat sets the interval of a stream's heartbeat blank lines
// (default 15 s).
func WithHeartbeat(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("synthienttest: heartbeat must be positive")
		}
		c.heartbeat = d
	}
}

// WithStreamLifetime sets how long a stream lives before the server closes
// it cleanly (default 30 min).
func WithStreamLifetime(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("synthienttest: stream lifetime must be positive")
		}
		c.lifetime = d
	}
}

// WithMaxEvents makes the server close each stream cleanly after n events
// (default 0: no limit).
func WithMaxEvents(n int) Option {
	return func(c *config) {
		if n < 0 {
			panic("synthienttest: negative max events")
		}
		c.maxEvents = n
	}
}

// DetailsForm is how the honeypot_https stream sends an event's details.
type DetailsForm int

const (
	// DetailsString sends the parsed ClientHello as a JSON-encoded string,
	// as the OpenAPI document says (the default).
	DetailsString DetailsForm = iota
	// DetailsObject sends it as a JSON object (as go-synthient expects).
	DetailsObject
	// DetailsMixed sends a string, an object or null, in turn.
	DetailsMixed
)

// WithHTTPSDetails sets the form of the honeypot_https details.
func WithHTTPSDetails(f DetailsForm) Option {
	return func(c *config) { c.httpsDetails = f }
}

// WithListenAddr sets the address the API origin listens on, such as
// "127.0.0.1:8080", for a fake that other programs reach at a known URL.
// The storage host still takes a random loopback port. The default is a
// random loopback port.
func WithListenAddr(addr string) Option {
	return func(c *config) { c.listenAddr = addr }
}

// NewServer starts the fake API and its storage host on 127.0.0.1, each on
// a random port. It panics if it cannot listen; Start returns the error.
func NewServer(opts ...Option) *Server {
	s, err := Start(opts...)
	if err != nil {
		panic(err.Error())
	}
	return s
}

// Start is NewServer, returning an error when it cannot listen (for
// example on a WithListenAddr address already in use).
func Start(opts ...Option) (*Server, error) {
	cfg := config{
		now:           time.Now,
		credits:       DefaultCredits,
		exportDays:    3,
		exportSize:    defaultExportSize,
		presignExpiry: 24 * time.Hour,
		rateLimits:    true,
		rates:         defaultRates(),
		streamLimit:   DefaultStreamLimit,
		eventInterval: 50 * time.Millisecond,
		heartbeat:     DefaultHeartbeat,
		lifetime:      DefaultStreamLifetime,
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := &Server{
		cfg:      cfg,
		secret:   make([]byte, 32),
		done:     make(chan struct{}),
		faults:   map[string][]*pendingFault{},
		arrivals: map[string]int{},
		keys:     map[string]*apiKey{},
		sums:     map[string]*sumEntry{},
	}
	if _, err := rand.Read(s.secret); err != nil {
		return nil, fmt.Errorf("synthienttest: %w", err)
	}
	s.APIKey = s.addKey(AllScopes(), cfg.credits, "synthienttest")

	apiAddr := cfg.listenAddr
	if apiAddr == "" {
		apiAddr = "127.0.0.1:0"
	}
	apiLn, err := net.Listen("tcp", apiAddr)
	if err != nil {
		return nil, fmt.Errorf("synthienttest: listening on %s: %w", apiAddr, err)
	}
	stLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		apiLn.Close()
		return nil, fmt.Errorf("synthienttest: listening on loopback: %w", err)
	}
	s.URL = "http://" + apiLn.Addr().String() + "/api/v4"
	s.StorageURL = "http://" + stLn.Addr().String()
	s.apiSrv = s.newHTTPServer(http.HandlerFunc(s.serveAPI))
	s.storageSrv = s.newHTTPServer(http.HandlerFunc(s.serveStorage))
	s.serving.Add(2)
	go func() { defer s.serving.Done(); _ = s.apiSrv.Serve(apiLn) }()
	go func() { defer s.serving.Done(); _ = s.storageSrv.Serve(stLn) }()
	return s, nil
}

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				s.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				s.conns.Done()
			}
		},
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
}

// Close shuts both origins down: it ends open streams and injected waits,
// closes every connection and returns when every handler has returned.
// Calling it again does nothing.
func (s *Server) Close() {
	s.hmu.Lock()
	if s.closed {
		s.hmu.Unlock()
		return
	}
	s.closed = true
	s.hmu.Unlock()
	close(s.done)
	_ = s.apiSrv.Close()
	_ = s.storageSrv.Close()
	s.handlers.Wait()
	s.serving.Wait()
	waitTimeout(&s.conns, 5*time.Second)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// enter registers a running handler; false once the server is closed.
func (s *Server) enter() bool {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// refuse answers a request that arrived while the server closes.
func (s *Server) refuse(w http.ResponseWriter) {
	w.Header().Set("X-Request-Id", s.requestID())
	w.Header().Set("Connection", "close")
	http.Error(w, "server closed", http.StatusServiceUnavailable)
}

func (s *Server) now() time.Time { return s.cfg.now().UTC() }

// sleep waits d, or less if the request's context ends or the server
// closes; it reports whether the whole wait passed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// requestID returns the next request ID: a deterministic, UUID-shaped
// sequence.
func (s *Server) requestID() string {
	n := s.reqSeq.Add(1)
	return uuidFrom(fmt.Sprintf("synthienttest request %d", n))
}

// uuidFrom derives a version 4 UUID from seed.
func uuidFrom(seed string) string {
	h := sha256.Sum256([]byte(seed))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// begin logs an arriving request, counts it and sets its X-Request-Id.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, route string) *statusWriter {
	id := s.requestID()
	w.Header().Set("X-Request-Id", id)
	e := &Request{
		Time:          s.now(),
		Method:        r.Method,
		Route:         route,
		Path:          r.URL.EscapedPath(),
		Query:         s.redactQuery(r.URL.RawQuery),
		RequestID:     id,
		Header:        http.Header{},
		APIKey:        len(r.Header.Values("X-Api-Key")) > 0,
		Authorization: len(r.Header.Values("Authorization")) > 0,
		Cookie:        len(r.Header.Values("Cookie")) > 0,
	}
	for _, k := range []string{"User-Agent", "Accept", "Content-Type"} {
		if v := r.Header.Values(k); len(v) > 0 {
			e.Header[k] = append([]string(nil), v...)
		}
	}
	s.mu.Lock()
	s.arrivals[route]++
	s.log = append(s.log, e)
	s.mu.Unlock()
	return &statusWriter{ResponseWriter: w, s: s, e: e}
}

// redactQuery replaces the secrets of a raw query by REDACTED.
func (s *Server) redactQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, value, _ := strings.Cut(p, "=")
		if secretParam[strings.ToLower(name)] || s.isKey(value) {
			parts[i] = name + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}

var secretParam = map[string]bool{
	"x-amz-signature": true, "api_key": true, "apikey": true, "api-key": true,
	"x-api-key": true, "key": true, "token": true,
}

// isKey reports whether the query value v is one of the server's keys.
func (s *Server) isKey(v string) bool {
	if u, err := url.QueryUnescape(v); err == nil {
		v = u
	}
	if v == "" {
		return false
	}
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	_, ok := s.keys[strings.ToLower(v)]
	return ok
}

func (s *Server) setStatus(e *Request, code int) {
	s.mu.Lock()
	e.Status = code
	s.mu.Unlock()
}

// Arrivals returns how many requests reached route (a Route* template, or
// "" for unknown paths) since the start or the last Reset, faulted or not.
func (s *Server) Arrivals(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrivals[route]
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	for i, e := range s.log {
		out[i] = *e
		out[i].Header = e.Header.Clone()
	}
	return out
}

// Reset clears the pending faults, the arrival counts and the request log.
// Keys, credits, rate limiters and open streams are left alone.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string][]*pendingFault{}
	s.arrivals = map[string]int{}
	s.log = nil
}

// SetUnhealthy makes /health answer 503 with these problems; no problems
// makes it healthy again.
func (s *Server) SetUnhealthy(problems ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sick = append([]string(nil), problems...)
}

// statusWriter records the status of a response in its log entry, and
// keeps the connection's writer from being used once it was hijacked.
type statusWriter struct {
	http.ResponseWriter
	s        *Server
	e        *Request
	wrote    bool
	hijacked bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.hijacked {
		return
	}
	if !w.wrote && code >= 200 {
		w.wrote = true
		w.s.setStatus(w.e, code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) FlushError() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, brw, err
}

// ManualClock is a clock for WithClock that moves only when told. It is
// safe for concurrent use.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a clock standing at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
