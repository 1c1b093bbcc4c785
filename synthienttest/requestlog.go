package synthienttest

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

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
	// headers, and its W3C trace-context headers (Traceparent, Tracestate,
	// Baggage), when present: a test can see whether a trace reached an
	// origin.
	Header http.Header
	// APIKey, Authorization and Cookie report whether the request carried
	// an X-Api-Key, Authorization or Cookie header (never their values).
	APIKey, Authorization, Cookie bool
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
	for _, k := range loggedHeaders {
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

// loggedHeaders are the request headers the log keeps (Request.Header).
var loggedHeaders = []string{"User-Agent", "Accept", "Content-Type", "Traceparent", "Tracestate", "Baggage"}

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

// Reset clears the pending faults, the arrival counts, the request log
// and the log of charged addresses (ChargedIPs).
// Keys, credits, rate limiters and open streams are left alone.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string][]*pendingFault{}
	s.arrivals = map[string]int{}
	s.log = nil
	s.charged = nil
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
