package synthienttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient/internal/problem"
)

// FaultKind says what an injected fault does.
type FaultKind int

const (
	// FaultStatus answers Fault.Status (default 503), with Retry-After
	// when Fault.RetryAfter is set, and Fault.Body, or else a problem+json
	// body (an S3-style XML error on the storage host).
	FaultStatus FaultKind = iota
	// FaultCloseAfterRequest reads the whole request, then closes the
	// connection without answering.
	FaultCloseAfterRequest
	// FaultResetMidBody sends the route's real headers and the first
	// Fault.Size bytes of its body, then resets the connection (TCP RST).
	FaultResetMidBody
	// FaultSlowHeaders waits Fault.Delay (default 1 min) before answering
	// normally. The wait ends early when the client goes away or the server
	// closes.
	FaultSlowHeaders
	// FaultSlowBody sends the route's real answer, its body in chunks of
	// Fault.Size bytes (default 64) with a pause of Fault.Delay (default
	// 50 ms) after each.
	FaultSlowBody
	// FaultTruncatedBody sends the route's real headers, a Content-Length
	// for the whole body (a stream has none), and the first Fault.Size
	// bytes of it, then closes the connection cleanly.
	FaultTruncatedBody
	// FaultOversizedLine answers 200 with one line of Fault.Size bytes
	// (default 17 MiB, more than the 16 MiB a client should accept) and a
	// newline, generated as it is sent: a JSON object with one long
	// string member. On a stream route it is NDJSON, and the stream then
	// ends cleanly.
	FaultOversizedLine
)

var faultNames = [...]string{"status", "close-after-request", "reset-mid-body", "slow-headers", "slow-body", "truncated-body", "oversized-line"}

// String returns the kind's name, such as "reset-mid-body".
func (k FaultKind) String() string {
	if k >= 0 && int(k) < len(faultNames) {
		return faultNames[k]
	}
	return "FaultKind(" + strconv.Itoa(int(k)) + ")"
}

// Fault is what Inject makes a route do instead of answering normally.
// The fields a kind does not use are ignored.
type Fault struct {
	Kind FaultKind
	// Status is FaultStatus's status code; 0 means 503.
	Status int
	// RetryAfter is FaultStatus's Retry-After header, sent as is ("0",
	// "2", an HTTP date, or garbage); empty for none.
	RetryAfter string
	// Body is FaultStatus's body. When empty, the body is problem+json
	// (XML on the storage host), or empty if ContentType is set.
	Body string
	// ContentType is the Content-Type of Body (default text/plain).
	ContentType string
	// Delay is the wait of FaultSlowHeaders, the pause between the chunks
	// of FaultSlowBody, and a wait before acting for FaultStatus and
	// FaultCloseAfterRequest (default none).
	Delay time.Duration
	// Size is the number of body bytes FaultResetMidBody and
	// FaultTruncatedBody send before the cut (default: half the body; on a
	// stream, the first event), the chunk size of FaultSlowBody, and the
	// line length of FaultOversizedLine.
	Size int
}

type pendingFault struct {
	f    Fault
	left int // < 0: until Reset
}

// Inject makes the next n requests that reach route (a Route* template,
// such as RouteLookupIP or RouteStorage) answered by f, before any other
// check (key, scope, rate limit). n < 0 means every request until Reset.
// Faults injected on the same route apply in the order given. Inject
// panics on an unknown route.
func (s *Server) Inject(route string, n int, f Fault) {
	if !knownRoutes[route] {
		panic("synthienttest: Inject: unknown route " + strconv.Quote(route))
	}
	if f.Kind < FaultStatus || f.Kind > FaultOversizedLine {
		panic("synthienttest: Inject: unknown fault kind " + f.Kind.String())
	}
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], &pendingFault{f: f, left: n})
}

// takeFault takes the next fault of route, marking the request's log
// entry.
func (s *Server) takeFault(route string, e *Request) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[route]
	if len(q) == 0 {
		return Fault{}, false
	}
	pf := q[0]
	if pf.left > 0 {
		pf.left--
		if pf.left == 0 {
			s.faults[route] = q[1:]
		}
	}
	e.Faulted = true
	return pf.f, true
}

var errCut = errors.New("synthienttest: connection cut by an injected fault")

// runFault answers r with fault f. handle answers the request normally,
// into the writer it is given.
func (s *Server) runFault(sw *statusWriter, r *http.Request, route string, f Fault, handle func(http.ResponseWriter)) {
	ctx := r.Context()
	live := route == RouteStream || route == RouteStorage
	switch f.Kind {
	case FaultStatus:
		if s.sleep(ctx, f.Delay) {
			s.writeStatusFault(sw, r, route, f)
		}
	case FaultCloseAfterRequest:
		_, _ = io.Copy(io.Discard, r.Body)
		s.sleep(ctx, f.Delay)
		s.hijackClose(sw, false)
	case FaultSlowHeaders:
		d := f.Delay
		if d <= 0 {
			d = time.Minute
		}
		if s.sleep(ctx, d) {
			handle(sw)
		}
	case FaultOversizedLine:
		s.writeOversized(sw, route, f)
	case FaultSlowBody, FaultResetMidBody, FaultTruncatedBody:
		if live {
			fw := &faultWriter{s: s, r: r, sw: sw, f: f}
			handle(fw)
			fw.finish()
			return
		}
		rec := &recorder{header: sw.Header().Clone(), status: http.StatusOK}
		handle(rec)
		s.emitRecorded(sw, r, rec, f)
	}
}

func problemSlug(status int) string {
	switch status {
	case 400:
		return "bad-request"
	case 401:
		return "unauthorized"
	case 402:
		return "payment-required"
	case 403:
		return "forbidden"
	case 404:
		return "not-found"
	case 422:
		return "validation"
	case 429:
		return "rate-limited"
	case 503:
		return "service-unavailable"
	}
	if status >= 500 {
		return "internal"
	}
	return "error"
}

func s3Code(status int) string {
	switch status {
	case 403:
		return "AccessDenied"
	case 404:
		return "NoSuchKey"
	case 429, 503:
		return "SlowDown"
	case 500:
		return "InternalError"
	}
	return "ServiceUnavailable"
}

func (s *Server) writeStatusFault(w http.ResponseWriter, r *http.Request, route string, f Fault) {
	status := f.Status
	if status == 0 {
		status = http.StatusServiceUnavailable
	}
	h := w.Header()
	if f.RetryAfter != "" {
		h.Set("Retry-After", f.RetryAfter)
	}
	switch {
	case f.Body != "" || f.ContentType != "":
		ct := f.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Length", strconv.Itoa(len(f.Body)))
		w.WriteHeader(status)
		_, _ = io.WriteString(w, f.Body)
	case status < 400 || status > 599:
		h.Set("Content-Length", "0")
		w.WriteHeader(status)
	case route == RouteStorage:
		storageError(w, status, s3Code(status), http.StatusText(status), r.URL.EscapedPath())
	default:
		problem.Write(w, problem.Details{Type: errBase + problemSlug(status), Status: status,
			Title: http.StatusText(status), Detail: "Injected fault.", Instance: r.URL.Path})
	}
}

// hijackClose closes the request's connection without an answer; with
// reset, as a TCP RST.
func (s *Server) hijackClose(sw *statusWriter, reset bool) {
	conn, _, err := sw.Hijack()
	if err != nil {
		return
	}
	closeConn(conn, reset)
}

func closeConn(conn net.Conn, reset bool) {
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// writeOversized answers 200 with one line of f.Size bytes.
func (s *Server) writeOversized(w http.ResponseWriter, route string, f Fault) {
	size := f.Size
	if size <= 0 {
		size = 17 << 20
	}
	const head, tail = `{"pad":"`, `"}`
	h := w.Header()
	if route == RouteStream {
		h.Set("Content-Type", "application/x-ndjson")
	} else {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(size+1))
	}
	w.WriteHeader(http.StatusOK)
	if size < len(head)+len(tail) {
		_, _ = io.WriteString(w, strings.Repeat(" ", size)+"\n")
		return
	}
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte{'x'}, 64<<10)
	for left := size - len(head) - len(tail); left > 0; {
		n := min(left, len(chunk))
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		left -= n
	}
	_, _ = io.WriteString(w, tail+"\n")
	_ = http.NewResponseController(w).Flush()
}

// trickle writes p in chunks with a pause after each but the last.
func (s *Server) trickle(w http.ResponseWriter, r *http.Request, p []byte, f Fault) error {
	chunk, delay := f.Size, f.Delay
	if chunk <= 0 {
		chunk = 64
	}
	if delay <= 0 {
		delay = 50 * time.Millisecond
	}
	rc := http.NewResponseController(w)
	for len(p) > 0 {
		n := min(chunk, len(p))
		if _, err := w.Write(p[:n]); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil {
			return err
		}
		p = p[n:]
		if !s.sleep(r.Context(), delay) {
			return errCut
		}
	}
	return nil
}

// recorder keeps an answer in memory, for faults on the API's JSON routes.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.wrote, r.status = true, code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}

func (r *recorder) FlushError() error { return nil }

// emitRecorded sends a recorded answer with a body fault.
func (s *Server) emitRecorded(sw *statusWriter, r *http.Request, rec *recorder, f Fault) {
	body := rec.body.Bytes()
	if f.Kind == FaultSlowBody {
		h := sw.Header()
		for k := range h {
			delete(h, k)
		}
		for k, v := range rec.header {
			h[k] = v
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		sw.WriteHeader(rec.status)
		_ = s.trickle(sw, r, body, f)
		return
	}
	declared, n := len(body), f.Size
	if n <= 0 || n >= declared {
		n = declared / 2
	}
	if declared == 0 {
		declared = 1
	}
	conn, brw, err := sw.Hijack()
	if err != nil {
		return
	}
	s.setStatus(sw.e, rec.status)
	h := rec.header
	h.Set("Content-Length", strconv.Itoa(declared))
	h.Del("Transfer-Encoding")
	h.Set("Connection", "close")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	_, _ = fmt.Fprintf(brw, "HTTP/1.1 %d %s\r\n", rec.status, http.StatusText(rec.status))
	_ = h.Write(brw)
	_, _ = brw.WriteString("\r\n")
	_, _ = brw.Write(body[:n])
	_ = brw.Flush()
	closeConn(conn, f.Kind == FaultResetMidBody)
}

// faultWriter applies a body fault to a live answer (a stream or a
// storage download) as the handler writes it.
type faultWriter struct {
	s           *Server
	r           *http.Request
	sw          *statusWriter
	f           Fault
	wroteHeader bool
	cutAt       int64 // body bytes before the cut; < 0: after the first write
	sent        int64
	dead        bool
}

func (fw *faultWriter) Header() http.Header { return fw.sw.Header() }

func (fw *faultWriter) WriteHeader(code int) {
	if fw.wroteHeader {
		return
	}
	fw.wroteHeader = true
	fw.cutAt = -1
	if fw.f.Size > 0 {
		fw.cutAt = int64(fw.f.Size)
	} else if cl, err := strconv.ParseInt(fw.Header().Get("Content-Length"), 10, 64); err == nil {
		fw.cutAt = cl / 2
	}
	fw.sw.WriteHeader(code)
}

func (fw *faultWriter) Write(p []byte) (int, error) {
	if !fw.wroteHeader {
		fw.WriteHeader(http.StatusOK)
	}
	if fw.dead {
		return 0, errCut
	}
	if fw.f.Kind == FaultSlowBody {
		if err := fw.s.trickle(fw.sw, fw.r, p, fw.f); err != nil {
			fw.dead = true
			return 0, err
		}
		return len(p), nil
	}
	if fw.cutAt < 0 {
		n, err := fw.sw.Write(p)
		if err != nil {
			fw.dead = true
			return n, err
		}
		fw.cut()
		return n, nil
	}
	left := fw.cutAt - fw.sent
	if int64(len(p)) < left {
		n, err := fw.sw.Write(p)
		fw.sent += int64(n)
		return n, err
	}
	n, err := fw.sw.Write(p[:left])
	fw.sent += int64(n)
	if err != nil {
		fw.dead = true
		return n, err
	}
	fw.cut()
	return n, errCut
}

func (fw *faultWriter) FlushError() error {
	if fw.dead {
		return errCut
	}
	return fw.sw.FlushError()
}

// cut ends the connection: a reset or a clean close.
func (fw *faultWriter) cut() {
	fw.dead = true
	_ = fw.sw.FlushError()
	conn, _, err := fw.sw.Hijack()
	if err != nil {
		return
	}
	closeConn(conn, fw.f.Kind == FaultResetMidBody)
}

// finish cuts a connection the handler left whole.
func (fw *faultWriter) finish() {
	if fw.dead || fw.f.Kind == FaultSlowBody {
		return
	}
	if !fw.wroteHeader {
		fw.WriteHeader(http.StatusOK)
	}
	fw.cut()
}
