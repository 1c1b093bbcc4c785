package synthient_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// The tests in this file check every row of ../shared/docs/retry-rules.md
// for every operation of the billed and standard classes, on a mocked
// transport inside synctest bubbles: time is fake there, so a test can wait
// out a 60 s Retry-After at once and assert the exact fake time it took.

// mockBase is the base URL of the mocked API.
const mockBase = "https://api.test/api/v4"

// reply is one scripted answer of the mocked API.
type reply struct {
	status int
	header http.Header
	body   string
	err    error // the transport fails with err instead of answering
	// success answers 200 with the operation's success body.
	success bool
	// dated sets Date to the (fake) current time plus skew, and Retry-After
	// to the HTTP-date dated after that Date; with noDate no Date is sent.
	dated  time.Duration
	skew   time.Duration
	noDate bool
	// hang answers only when the request's context ends, with its error.
	hang bool
}

// succeed answers 200 with the operation's success body.
var succeed = reply{success: true}

// respond is an answer with a status, a body and header pairs (a key may
// repeat to give it several values).
func respond(status int, body string, kv ...string) reply {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return reply{status: status, header: h, body: body}
}

// jsonReply is an application/json answer.
func jsonReply(status int, body string, kv ...string) reply {
	return respond(status, body, append([]string{"Content-Type", "application/json"}, kv...)...)
}

// problemReply is an error status with a problem+json body.
func problemReply(status int, kv ...string) reply {
	body := fmt.Sprintf(`{"type":"https://docs.synthient.com/errors/test","title":%q,"status":%d}`,
		http.StatusText(status), status)
	return respond(status, body, append([]string{"Content-Type", "application/problem+json"}, kv...)...)
}

// failWith makes the transport return err.
func failWith(err error) reply { return reply{err: err} }

// repeat returns n copies of r.
func repeat(n int, r reply) []reply {
	out := make([]reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// arrival is one request that reached the mocked API.
type arrival struct {
	at     time.Time
	method string
	url    url.URL
	header http.Header
	body   []byte
}

// mockAPI is an httpmock transport that answers every request from a
// script (the last reply repeats) or a handler, and records the arrivals.
type mockAPI struct {
	mt      *httpmock.MockTransport
	success string

	mu       sync.Mutex
	script   []reply
	handler  func(arrival) reply
	arrivals []arrival
}

func newMock(success string, script ...reply) *mockAPI {
	m := &mockAPI{mt: httpmock.NewMockTransport(), success: success, script: script}
	m.mt.RegisterNoResponder(m.serve)
	return m
}

func (m *mockAPI) serve(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	a := arrival{at: time.Now(), method: req.Method, url: *req.URL, header: req.Header.Clone(), body: body}
	m.mu.Lock()
	n := len(m.arrivals)
	m.arrivals = append(m.arrivals, a)
	handler := m.handler
	r := succeed
	if len(m.script) > 0 {
		r = m.script[min(n, len(m.script)-1)]
	}
	m.mu.Unlock()
	if handler != nil {
		r = handler(a)
	}
	if r.hang {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.success {
		r = jsonReply(http.StatusOK, m.success)
	}
	h := r.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if r.dated != 0 {
		date := time.Now().UTC().Add(r.skew)
		if !r.noDate {
			h.Set("Date", date.Format(http.TimeFormat))
		}
		h.Set("Retry-After", date.Add(r.dated).Format(http.TimeFormat))
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", r.status, http.StatusText(r.status)),
		StatusCode:    r.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(r.body)),
		ContentLength: int64(len(r.body)),
		Request:       req,
	}, nil
}

// client returns a client of the mocked API (tiny backoffs, closed at the
// end of the test); opts come after the defaults and override them.
func (m *mockAPI) client(t testing.TB, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	return newClient(t, mockBase, append([]synthient.Option{synthient.WithTransport(m.mt)}, opts...)...)
}

func (m *mockAPI) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.arrivals)
}

func (m *mockAPI) got() []arrival {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]arrival(nil), m.arrivals...)
}

// gaps returns the time between consecutive arrivals.
func (m *mockAPI) gaps() []time.Duration {
	as := m.got()
	var out []time.Duration
	for i := 1; i < len(as); i++ {
		out = append(out, as[i].at.Sub(as[i-1].at))
	}
	return out
}

// opCase is one operation of the billed or standard class.
type opCase struct {
	name    string
	billed  bool
	method  string
	path    string // the path the request must have
	success string // a 200 body that decodes
	call    func(context.Context, *synthient.Client) error
}

var testIP = netip.MustParseAddr("1.2.3.4")

func operations() []opCase {
	return []opCase{
		{
			name: "LookupIP", billed: true, method: http.MethodGet, path: "/api/v4/lookup/ip/1.2.3.4",
			success: `{"ip":"1.2.3.4"}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupIP(ctx, testIP)
				return err
			},
		},
		{
			name: "LookupIPs", billed: true, method: http.MethodPost, path: "/api/v4/lookup/ips",
			success: `{"results":[{"ip":"1.2.3.4"}]}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupIPs(ctx, []netip.Addr{testIP})
				return err
			},
		},
		{
			name: "LookupDomain", billed: true, method: http.MethodGet, path: "/api/v4/lookup/domain/example.org",
			success: `{"domain":"example.org","status":"active"}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupDomain(ctx, "example.org", nil)
				return err
			},
		},
		{
			name: "Health", billed: true, method: http.MethodGet, path: "/api/v4/health",
			success: `{"status":"ok"}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.Health(ctx)
				return err
			},
		},
		{
			name: "Account", billed: false, method: http.MethodGet, path: "/api/v4/account/me",
			success: `{"first_name":"Grace","email":"grace@example.com","scopes":["BASIC"]}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.Account(ctx)
				return err
			},
		},
	}
}

func opNamed(name string) opCase {
	for _, op := range operations() {
		if op.name == name {
			return op
		}
	}
	panic("no operation " + name)
}

// baseOf returns the *synthient.Error that every failure of a request
// reaches with errors.As.
func baseOf(t testing.TB, err error) *synthient.Error {
	t.Helper()
	var e *synthient.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(%T %v, *synthient.Error) = false", err, err)
	}
	return e
}

// apiErrorOf returns the *APIError of err.
func apiErrorOf(t testing.TB, err error) *synthient.APIError {
	t.Helper()
	var ae *synthient.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("errors.As(%T %v, *synthient.APIError) = false", err, err)
	}
	return ae
}

func dur(d time.Duration) *time.Duration { return &d }

func fmtDur(d *time.Duration) string {
	if d == nil {
		return "nil"
	}
	return d.String()
}

// randOne makes the jitter draw 1: the wait is exactly b(k).
var randOne = synthient.WithRandom(func() float64 { return 1 })

// outcome is what one class does with a scripted exchange.
type outcome struct {
	arrivals int
	reason   synthient.StopReason // empty: the call succeeds
}

type ruleCase struct {
	name     string
	script   []reply
	opts     []synthient.Option
	billed   outcome
	standard outcome
	// status is the *APIError's status on a failure; 0 means the failure
	// is a *ConnectionError.
	status int
	// retryAfter is the APIError's RetryAfter; nil means it must be nil.
	retryAfter *time.Duration
	// anyRetryAfterAbove, when set, replaces the retryAfter check: the
	// RetryAfter must be longer.
	anyRetryAfterAbove time.Duration
	notSent            bool // a ConnectionError's NotSent
	timeout            bool // the ConnectionError is a *TimeoutError
	// elapsed is the least fake time a call that sent more than one request
	// must take (the waits it must have made).
	elapsed time.Duration
}

func ruleCases() []ruleCase {
	const (
		rateLimited   = retry.RateLimitedWithoutRetryAfter
		exceedsMax    = retry.RetryAfterExceedsMax
		exhausted     = retry.AttemptsExhausted
		mayHaveBeen   = retry.MayHaveBeenProcessed
		notRetryable  = retry.NotRetryable
		once          = 1
		defaultTries  = 3 // 1 + the default 2 retries
		capTries      = 17
		retryAfter429 = "Retry-After"
	)
	ok2 := outcome{2, ""}
	cases := []ruleCase{
		{
			name:     "429_retry_after_0_is_retried",
			script:   []reply{problemReply(429, retryAfter429, "0"), succeed},
			billed:   ok2,
			standard: ok2,
		},
		{
			name:     "429_without_retry_after",
			script:   []reply{problemReply(429), succeed},
			billed:   outcome{once, rateLimited},
			standard: outcome{once, rateLimited},
			status:   429,
		},
		{
			name:       "429_retry_after_61_with_max_retries_5",
			script:     []reply{problemReply(429, retryAfter429, "61"), succeed},
			opts:       []synthient.Option{synthient.WithMaxRetries(5)},
			billed:     outcome{once, exceedsMax},
			standard:   outcome{once, exceedsMax},
			status:     429,
			retryAfter: dur(61 * time.Second),
		},
		{
			name:               "429_retry_after_too_large_for_a_duration",
			script:             []reply{problemReply(429, retryAfter429, "99999999999999999999999"), succeed},
			opts:               []synthient.Option{synthient.WithMaxRetries(5)},
			billed:             outcome{once, exceedsMax},
			standard:           outcome{once, exceedsMax},
			status:             429,
			anyRetryAfterAbove: time.Hour,
		},
		{
			name:     "429_retry_after_60_is_waited",
			script:   []reply{problemReply(429, retryAfter429, "60"), succeed},
			billed:   ok2,
			standard: ok2,
			elapsed:  60 * time.Second,
		},
		{
			name:     "429_retry_after_http_date_is_waited",
			script:   []reply{{status: 429, dated: 7 * time.Second, body: `{"status":429}`}, succeed},
			billed:   ok2,
			standard: ok2,
			elapsed:  7 * time.Second,
		},
		{
			// The wait is measured against the response's Date, not the
			// local clock: a server clock an hour behind still means 7 s.
			name:     "429_retry_after_http_date_against_a_skewed_date_header",
			script:   []reply{{status: 429, dated: 7 * time.Second, skew: -time.Hour, body: `{"status":429}`}, succeed},
			billed:   ok2,
			standard: ok2,
			elapsed:  7 * time.Second,
		},
		{
			name:     "429_retry_after_http_date_without_date_header",
			script:   []reply{{status: 429, dated: 5 * time.Second, noDate: true, body: `{"status":429}`}, succeed},
			billed:   ok2,
			standard: ok2,
			elapsed:  5 * time.Second,
		},
		{
			name:       "429_retry_after_past_http_date_means_0",
			script:     []reply{{status: 429, dated: -time.Hour, body: `{"status":429}`}},
			opts:       []synthient.Option{synthient.WithMaxRetries(0)},
			billed:     outcome{once, exhausted},
			standard:   outcome{once, exhausted},
			status:     429,
			retryAfter: dur(0),
		},
		{
			name:       "429_retry_after_11_over_max_retry_after_10s",
			script:     []reply{problemReply(429, retryAfter429, "11"), succeed},
			opts:       []synthient.Option{synthient.WithMaxRetryAfter(10 * time.Second)},
			billed:     outcome{once, exceedsMax},
			standard:   outcome{once, exceedsMax},
			status:     429,
			retryAfter: dur(11 * time.Second),
		},
		{
			name:     "429_retry_after_10_at_max_retry_after_10s",
			script:   []reply{problemReply(429, retryAfter429, "10"), succeed},
			opts:     []synthient.Option{synthient.WithMaxRetryAfter(10 * time.Second)},
			billed:   ok2,
			standard: ok2,
			elapsed:  10 * time.Second,
		},
		{
			name:       "429_default_max_retries",
			script:     []reply{problemReply(429, retryAfter429, "0")},
			billed:     outcome{defaultTries, exhausted},
			standard:   outcome{defaultTries, exhausted},
			status:     429,
			retryAfter: dur(0),
		},
		{
			name:       "429_max_retries_0",
			script:     []reply{problemReply(429, retryAfter429, "0")},
			opts:       []synthient.Option{synthient.WithMaxRetries(0)},
			billed:     outcome{once, exhausted},
			standard:   outcome{once, exhausted},
			status:     429,
			retryAfter: dur(0),
		},
		{
			name:       "429_max_retries_3",
			script:     []reply{problemReply(429, retryAfter429, "0")},
			opts:       []synthient.Option{synthient.WithMaxRetries(3)},
			billed:     outcome{4, exhausted},
			standard:   outcome{4, exhausted},
			status:     429,
			retryAfter: dur(0),
		},
		{
			name:       "429_max_retries_100_is_capped_at_16",
			script:     []reply{problemReply(429, retryAfter429, "0")},
			opts:       []synthient.Option{synthient.WithMaxRetries(100)},
			billed:     outcome{capTries, exhausted},
			standard:   outcome{capTries, exhausted},
			status:     429,
			retryAfter: dur(0),
		},
		{
			name:     "503_max_retries_0",
			script:   []reply{problemReply(503), succeed},
			opts:     []synthient.Option{synthient.WithMaxRetries(0)},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{once, exhausted},
			status:   503,
		},
		{
			name:     "503_then_200",
			script:   []reply{problemReply(503), succeed},
			billed:   outcome{once, mayHaveBeen},
			standard: ok2,
			status:   503,
		},
		{
			name:     "503_retry_after_3_is_waited_by_standard",
			script:   []reply{problemReply(503, retryAfter429, "3"), succeed},
			billed:   outcome{once, mayHaveBeen},
			standard: ok2,
			status:   503,
			// billed: the response said 3 s, which the error keeps.
			retryAfter: dur(3 * time.Second),
			elapsed:    3 * time.Second,
		},
		{
			name:       "503_retry_after_61",
			script:     []reply{problemReply(503, retryAfter429, "61"), succeed},
			billed:     outcome{once, mayHaveBeen},
			standard:   outcome{once, exceedsMax},
			status:     503,
			retryAfter: dur(61 * time.Second),
		},
		{
			name:     "network_error",
			script:   []reply{failWith(errors.New("read tcp: connection reset by peer")), succeed},
			opts:     []synthient.Option{synthient.WithMaxRetries(2)},
			billed:   outcome{once, mayHaveBeen},
			standard: ok2,
		},
		{
			name:     "network_error_every_time",
			script:   []reply{failWith(errors.New("read tcp: connection reset by peer"))},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{defaultTries, exhausted},
		},
		{
			name:     "timeout_every_time",
			script:   []reply{failWith(timeoutError{})},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{defaultTries, exhausted},
			timeout:  true,
		},
		{
			name:     "dial_error_every_time",
			script:   []reply{failWith(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})},
			billed:   outcome{once, notRetryable},
			standard: outcome{defaultTries, exhausted},
			notSent:  true,
		},
		{
			name:     "dial_error_then_200",
			script:   []reply{failWith(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), succeed},
			billed:   outcome{once, notRetryable},
			standard: ok2,
			notSent:  true,
		},
		{
			name:     "dns_error_every_time",
			script:   []reply{failWith(&net.DNSError{Err: "no such host", Name: "api.test", IsNotFound: true})},
			billed:   outcome{once, notRetryable},
			standard: outcome{defaultTries, exhausted},
			notSent:  true,
		},
		{
			name:     "tls_certificate_error_is_never_retried",
			script:   []reply{failWith(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), succeed},
			billed:   outcome{once, notRetryable},
			standard: outcome{once, notRetryable},
			notSent:  true,
		},
		{
			// An alert can come after the request was written: for a
			// billed call the outcome is unknown.
			name:     "tls_alert_is_never_retried",
			script:   []reply{failWith(tls.AlertError(40)), succeed},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{once, notRetryable},
		},
	}
	for _, v := range []string{"1.5", "-1", "+1", "soon", "", "1, 2", "Sun, 06 Nov 1994 08:49:37 PST"} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("429_unusable_retry_after_%q", v),
			script:   []reply{problemReply(429, retryAfter429, v), succeed},
			opts:     []synthient.Option{synthient.WithMaxRetries(5)},
			billed:   outcome{once, rateLimited},
			standard: outcome{once, rateLimited},
			status:   429,
		})
	}
	cases = append(cases, ruleCase{
		name:     "429_two_retry_after_values",
		script:   []reply{problemReply(429, retryAfter429, "1", retryAfter429, "2"), succeed},
		opts:     []synthient.Option{synthient.WithMaxRetries(5)},
		billed:   outcome{once, rateLimited},
		standard: outcome{once, rateLimited},
		status:   429,
	})
	for _, code := range []int{500, 502, 503, 504} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("%d_every_time", code),
			script:   []reply{problemReply(code)},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{defaultTries, exhausted},
			status:   code,
		})
	}
	for _, code := range []int{501, 505, 599, 408, 400, 401, 402, 403, 404, 409, 422} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("%d_is_not_retried", code),
			script:   []reply{problemReply(code), succeed},
			billed:   outcome{once, notRetryable},
			standard: outcome{once, notRetryable},
			status:   code,
		})
	}
	for _, code := range []int{301, 302, 303, 307, 308} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("%d_is_neither_followed_nor_retried", code),
			script:   []reply{respond(code, "", "Location", mockBase+"/elsewhere"), succeed},
			billed:   outcome{once, notRetryable},
			standard: outcome{once, notRetryable},
			status:   code,
		})
	}
	return cases
}

// timeoutError is a transport error that says a wait ran out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestRetryRules runs every rule of retry-rules.md on every operation of
// the billed and standard classes and checks the number of requests that
// reached the API, the stop reason, the typed error and the fake time the
// call took.
func TestRetryRules(t *testing.T) {
	for _, op := range operations() {
		for _, rc := range ruleCases() {
			t.Run(op.name+"/"+rc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					m := newMock(op.success, rc.script...)
					c := m.client(t, rc.opts...)
					start := time.Now()
					err := op.call(context.Background(), c)
					elapsed := time.Since(start)
					checkRule(t, op, rc, m, err, elapsed)
				})
			})
		}
	}
}

func checkRule(t *testing.T, op opCase, rc ruleCase, m *mockAPI, err error, elapsed time.Duration) {
	t.Helper()
	want := rc.standard
	if op.billed {
		want = rc.billed
	}
	if got := m.count(); got != want.arrivals {
		t.Errorf("%d requests reached the API, want %d (err: %v)", got, want.arrivals, err)
	}
	checkArrivals(t, op, m)
	if want.reason == "" {
		if err != nil {
			t.Fatalf("err = %v, want success", err)
		}
		if want.arrivals > 1 && elapsed < rc.elapsed {
			t.Errorf("the call took %v of fake time, want at least %v", elapsed, rc.elapsed)
		}
		if rc.elapsed > 0 && elapsed >= rc.elapsed+time.Second {
			t.Errorf("the call took %v of fake time, want about %v", elapsed, rc.elapsed)
		}
		return
	}
	if err == nil {
		t.Fatalf("err = nil, want a failure with stop reason %q", want.reason)
	}
	base := baseOf(t, err)
	if base.Op != op.name || base.Attempts != want.arrivals || base.StopReason != want.reason {
		t.Errorf("base error: Op %q, Attempts %d, StopReason %q; want %q, %d, %q",
			base.Op, base.Attempts, base.StopReason, op.name, want.arrivals, want.reason)
	}
	if want.arrivals == 1 && elapsed != 0 {
		t.Errorf("the call returned after %v of fake time, want at once", elapsed)
	}
	if rc.status != 0 {
		ae := apiErrorOf(t, err)
		if ae.Status != rc.status {
			t.Errorf("APIError.Status = %d, want %d", ae.Status, rc.status)
		}
		switch {
		case rc.anyRetryAfterAbove > 0:
			if ae.RetryAfter == nil || *ae.RetryAfter <= rc.anyRetryAfterAbove {
				t.Errorf("APIError.RetryAfter = %s, want more than %v", fmtDur(ae.RetryAfter), rc.anyRetryAfterAbove)
			}
		case rc.retryAfter == nil:
			if ae.RetryAfter != nil {
				t.Errorf("APIError.RetryAfter = %v, want nil", *ae.RetryAfter)
			}
		default:
			if ae.RetryAfter == nil || *ae.RetryAfter != *rc.retryAfter {
				t.Errorf("APIError.RetryAfter = %s, want %v", fmtDur(ae.RetryAfter), *rc.retryAfter)
			}
		}
		return
	}
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v, want a *ConnectionError", err, err)
	}
	if ce.NotSent != rc.notSent {
		t.Errorf("ConnectionError.NotSent = %v, want %v", ce.NotSent, rc.notSent)
	}
	var te *synthient.TimeoutError
	if isTimeout := errors.As(err, &te); isTimeout != rc.timeout {
		t.Errorf("errors.As(err, *TimeoutError) = %v, want %v (err %T %v)", isTimeout, rc.timeout, err, err)
	}
	var ae *synthient.APIError
	if errors.As(err, &ae) {
		t.Errorf("a transport failure reaches an *APIError: %v", ae)
	}
}

// checkArrivals checks that every request of a call, retries included,
// is the same: method, path, body, and the key (none for Health).
func checkArrivals(t *testing.T, op opCase, m *mockAPI) {
	t.Helper()
	wantBody := ""
	if op.method == http.MethodPost {
		wantBody = `{"ips":["1.2.3.4"]}`
	}
	for i, a := range m.got() {
		if a.method != op.method || a.url.Path != op.path {
			t.Errorf("request %d: %s %s, want %s %s", i+1, a.method, a.url.Path, op.method, op.path)
		}
		if string(a.body) != wantBody {
			t.Errorf("request %d: body %q, want %q", i+1, a.body, wantBody)
		}
		key, sent := a.header[http.CanonicalHeaderKey("X-Api-Key")]
		switch {
		case op.name == "Health" && sent:
			t.Errorf("request %d: X-Api-Key sent to /health", i+1)
		case op.name != "Health" && (len(key) != 1 || key[0] != testKey):
			t.Errorf("request %d: X-Api-Key %q, want the key", i+1, key)
		}
	}
}

func TestNegativeMaxRetriesIsInvalid(t *testing.T) {
	for _, n := range []int{-1, -100, math.MinInt} {
		c, err := synthient.NewClient(testKey, synthient.WithMaxRetries(n))
		if !errors.Is(err, synthient.ErrInvalidArgument) {
			t.Errorf("WithMaxRetries(%d): err = %v, want ErrInvalidArgument", n, err)
		}
		if c != nil {
			t.Errorf("WithMaxRetries(%d): a client was returned with the error", n)
		}
	}
	for _, n := range []int{0, 1, 16, 1000} {
		c, err := synthient.NewClient(testKey, synthient.WithMaxRetries(n))
		if err != nil {
			t.Errorf("WithMaxRetries(%d): err = %v, want nil", n, err)
			continue
		}
		c.Close()
	}
}

// TestWaitIsTheLongerOfBackoffAndRetryAfter checks wait = max(backoff,
// Retry-After) for a class of each kind.
func TestWaitIsTheLongerOfBackoffAndRetryAfter(t *testing.T) {
	cases := []struct {
		retryAfter string
		want       time.Duration
	}{
		{"2", 10 * time.Second},  // the backoff is longer
		{"20", 20 * time.Second}, // the Retry-After is longer
		{"0", 10 * time.Second},
		{"10", 10 * time.Second},
	}
	for _, name := range []string{"LookupIP", "Account"} {
		op := opNamed(name)
		for _, tc := range cases {
			t.Run(name+"/retry_after_"+tc.retryAfter, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					m := newMock(op.success, problemReply(429, "Retry-After", tc.retryAfter), succeed)
					c := m.client(t, synthient.WithBackoff(10*time.Second, 30*time.Second), randOne)
					if err := op.call(context.Background(), c); err != nil {
						t.Fatalf("err = %v", err)
					}
					if got := m.gaps(); len(got) != 1 || got[0] != tc.want {
						t.Errorf("waits = %v, want [%v]", got, tc.want)
					}
				})
			})
		}
	}
}

// TestBackoffSchedule checks b(k) = min(base*2^k, max) and the jitter
// range [0.75*b(k), b(k)], on 503s (Account) and on 429s with Retry-After: 0
// (LookupIP).
func TestBackoffSchedule(t *testing.T) {
	s := time.Second
	constant := func(v float64) synthient.Option { return synthient.WithRandom(func() float64 { return v }) }
	cases := []struct {
		name string
		opts []synthient.Option
		want []time.Duration
	}{
		{"doubles_from_1s", []synthient.Option{synthient.WithBackoff(s, 30*s), randOne}, []time.Duration{s, 2 * s, 4 * s}},
		{"capped_by_max", []synthient.Option{synthient.WithBackoff(s, 3*s), randOne}, []time.Duration{s, 2 * s, 3 * s, 3 * s}},
		{"reaches_default_cap_30s", []synthient.Option{synthient.WithBackoff(s, 30*s), randOne},
			[]time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s}},
		{"draw_0_is_three_quarters", []synthient.Option{synthient.WithBackoff(s, 30*s), constant(0)},
			[]time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * s}},
		{"draw_half", []synthient.Option{synthient.WithBackoff(s, 30*s), constant(0.5)},
			[]time.Duration{875 * time.Millisecond, 1750 * time.Millisecond, 3500 * time.Millisecond}},
		{"draw_NaN_is_longest", []synthient.Option{synthient.WithBackoff(s, 30*s), constant(math.NaN())}, []time.Duration{s, 2 * s, 4 * s}},
		{"draw_2_is_longest", []synthient.Option{synthient.WithBackoff(s, 30*s), constant(2)}, []time.Duration{s, 2 * s, 4 * s}},
		{"draw_minus_1_is_longest", []synthient.Option{synthient.WithBackoff(s, 30*s), constant(-1)}, []time.Duration{s, 2 * s, 4 * s}},
		{"draw_inf_is_longest", []synthient.Option{synthient.WithBackoff(s, 30*s), constant(math.Inf(-1))}, []time.Duration{s, 2 * s, 4 * s}},
	}
	scripts := map[string]reply{
		"Account":  problemReply(503),
		"LookupIP": problemReply(429, "Retry-After", "0"),
	}
	for _, name := range []string{"Account", "LookupIP"} {
		op := opNamed(name)
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					n := len(tc.want)
					m := newMock(op.success, append(repeat(n, scripts[name]), succeed)...)
					c := m.client(t, append([]synthient.Option{synthient.WithMaxRetries(n)}, tc.opts...)...)
					if err := op.call(context.Background(), c); err != nil {
						t.Fatalf("err = %v", err)
					}
					got := m.gaps()
					if fmt.Sprint(got) != fmt.Sprint(tc.want) {
						t.Errorf("waits = %v, want %v", got, tc.want)
					}
				})
			})
		}
	}
	// With the default randomness every wait lies in [0.75*b(k), b(k)].
	t.Run("Account/default_random_in_range", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			op := opNamed("Account")
			m := newMock(op.success, append(repeat(6, problemReply(503)), succeed)...)
			c := m.client(t, synthient.WithMaxRetries(6), synthient.WithBackoff(s, 30*s))
			if err := op.call(context.Background(), c); err != nil {
				t.Fatalf("err = %v", err)
			}
			ceilings := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s}
			got := m.gaps()
			if len(got) != len(ceilings) {
				t.Fatalf("waits = %v, want %d of them", got, len(ceilings))
			}
			for k, b := range ceilings {
				if got[k] < b*3/4 || got[k] > b {
					t.Errorf("wait %d = %v, want within [%v, %v]", k, got[k], b*3/4, b)
				}
			}
		})
	})
}

// TestRetryBudget checks that retrying stops with budget_exhausted when the
// next wait would make the call's waits add up to more than the budget.
func TestRetryBudget(t *testing.T) {
	s := time.Second
	cases := []struct {
		name     string
		op       string
		script   []reply
		opts     []synthient.Option
		arrivals int
		elapsed  time.Duration
		reason   synthient.StopReason // empty: success
	}{
		{"Account/budget_2.5s", "Account", []reply{problemReply(503)},
			[]synthient.Option{synthient.WithMaxRetries(5), synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(2500 * time.Millisecond)},
			2, s, retry.BudgetExhausted},
		{"Account/budget_3s_exactly_fits_two_waits", "Account", []reply{problemReply(503)},
			[]synthient.Option{synthient.WithMaxRetries(5), synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(3 * s)},
			3, 3 * s, retry.BudgetExhausted},
		{"Account/budget_500ms_below_the_first_wait", "Account", []reply{problemReply(503), succeed},
			[]synthient.Option{synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(500 * time.Millisecond)},
			1, 0, retry.BudgetExhausted},
		{"Account/budget_large_enough", "Account", []reply{problemReply(503), problemReply(503), succeed},
			[]synthient.Option{synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(10 * s)},
			3, 3 * s, ""},
		{"LookupIP/retry_after_counts_against_the_budget", "LookupIP", []reply{problemReply(429, "Retry-After", "2")},
			[]synthient.Option{synthient.WithMaxRetries(5), synthient.WithRetryBudget(3 * s)},
			2, 2 * s, retry.BudgetExhausted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newMock(op.success, tc.script...)
				c := m.client(t, tc.opts...)
				start := time.Now()
				err := op.call(context.Background(), c)
				elapsed := time.Since(start)
				if got := m.count(); got != tc.arrivals {
					t.Errorf("%d requests, want %d", got, tc.arrivals)
				}
				if elapsed != tc.elapsed {
					t.Errorf("the call took %v of fake time, want %v", elapsed, tc.elapsed)
				}
				if tc.reason == "" {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					return
				}
				if got := baseOf(t, err).StopReason; got != tc.reason {
					t.Errorf("StopReason = %q, want %q", got, tc.reason)
				}
				apiErrorOf(t, err)
			})
		})
	}
}

// TestDeadlineStopsBeforeAWaitThatWouldPassIt checks that the client looks
// at the caller's deadline before each wait: a wait that would pass it
// stops the call at once with the last error; one that fits is waited out
// in full.
func TestDeadlineStopsBeforeAWaitThatWouldPassIt(t *testing.T) {
	s := time.Second
	cases := []struct {
		name       string
		op         string
		script     []reply
		opts       []synthient.Option
		reason     synthient.StopReason // empty: success
		status     int
		retryAfter *time.Duration
		elapsed    time.Duration
	}{
		{"LookupIP/retry_after_10_deadline_5s", "LookupIP", []reply{problemReply(429, "Retry-After", "10"), succeed}, nil,
			retry.RetryAfterExceedsDeadline, 429, dur(10 * s), 0},
		{"Account/retry_after_10_deadline_5s", "Account", []reply{problemReply(429, "Retry-After", "10"), succeed}, nil,
			retry.RetryAfterExceedsDeadline, 429, dur(10 * s), 0},
		{"Health/retry_after_10_deadline_5s", "Health", []reply{problemReply(429, "Retry-After", "10"), succeed}, nil,
			retry.RetryAfterExceedsDeadline, 429, dur(10 * s), 0},
		{"Account/503_backoff_10s_deadline_5s", "Account", []reply{problemReply(503), succeed},
			[]synthient.Option{synthient.WithBackoff(10*s, 30*s), randOne},
			retry.BackoffExceedsDeadline, 503, nil, 0},
		{"LookupIP/retry_after_4_fits_deadline_5s", "LookupIP", []reply{problemReply(429, "Retry-After", "4"), succeed}, nil,
			"", 0, nil, 4 * s},
		{"Account/retry_after_4_fits_deadline_5s", "Account", []reply{problemReply(429, "Retry-After", "4"), succeed}, nil,
			"", 0, nil, 4 * s},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newMock(op.success, tc.script...)
				c := m.client(t, tc.opts...)
				ctx, cancel := context.WithTimeout(context.Background(), 5*s)
				defer cancel()
				start := time.Now()
				err := op.call(ctx, c)
				elapsed := time.Since(start)
				if elapsed != tc.elapsed {
					t.Errorf("the call took %v of fake time, want %v", elapsed, tc.elapsed)
				}
				if tc.reason == "" {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					if got := m.count(); got != 2 {
						t.Errorf("%d requests, want 2", got)
					}
					return
				}
				if got := m.count(); got != 1 {
					t.Errorf("%d requests, want 1", got)
				}
				if got := baseOf(t, err).StopReason; got != tc.reason {
					t.Errorf("StopReason = %q, want %q", got, tc.reason)
				}
				ae := apiErrorOf(t, err)
				if ae.Status != tc.status {
					t.Errorf("APIError.Status = %d, want %d", ae.Status, tc.status)
				}
				if tc.retryAfter != nil && (ae.RetryAfter == nil || *ae.RetryAfter != *tc.retryAfter) {
					t.Errorf("APIError.RetryAfter = %s, want %v", fmtDur(ae.RetryAfter), *tc.retryAfter)
				}
			})
		})
	}
}

// TestCancelDuringAWait checks that cancelling the context ends a wait at
// once, and that the error matches context.Canceled and still carries the
// last attempt's typed error.
func TestCancelDuringAWait(t *testing.T) {
	s := time.Second
	cases := []struct {
		name   string
		op     string
		script []reply
		opts   []synthient.Option
		status int // 0: the last error is a *ConnectionError
	}{
		{"LookupIP/429_retry_after_30", "LookupIP", []reply{problemReply(429, "Retry-After", "30"), succeed}, nil, 429},
		{"LookupIPs/429_retry_after_30", "LookupIPs", []reply{problemReply(429, "Retry-After", "30"), succeed}, nil, 429},
		{"Account/429_retry_after_30", "Account", []reply{problemReply(429, "Retry-After", "30"), succeed}, nil, 429},
		{"Account/503_backoff_30s", "Account", []reply{problemReply(503), succeed},
			[]synthient.Option{synthient.WithBackoff(30*s, 30*s)}, 503},
		{"Account/network_error_backoff_30s", "Account", []reply{failWith(errors.New("connection reset")), succeed},
			[]synthient.Option{synthient.WithBackoff(30*s, 30*s)}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newMock(op.success, tc.script...)
				c := m.client(t, tc.opts...)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() {
					time.Sleep(5 * s)
					cancel()
				}()
				start := time.Now()
				err := op.call(ctx, c)
				elapsed := time.Since(start)
				checkContextError(t, err, context.Canceled, tc.status)
				if elapsed != 5*s {
					t.Errorf("the call returned after %v of fake time, want 5s (the moment of the cancel)", elapsed)
				}
				if got := m.count(); got != 1 {
					t.Errorf("%d requests, want 1", got)
				}
				if base := baseOf(t, err); base.StopReason != retry.ContextDone || base.Op != op.name || base.Attempts != 1 {
					t.Errorf("base error: Op %q, Attempts %d, StopReason %q; want %q, 1, %q",
						base.Op, base.Attempts, base.StopReason, op.name, retry.ContextDone)
				}
			})
		})
	}
}

// hiddenDeadline is a context whose deadline the client cannot see in
// advance (Deadline reports none): it can only find out when Done closes
// with context.DeadlineExceeded, during a wait.
type hiddenDeadline struct{ context.Context }

func (hiddenDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestDeadlineExpiringDuringAWait checks that a deadline that passes during
// a wait ends it at once with an error matching context.DeadlineExceeded
// that still carries the last *APIError.
func TestDeadlineExpiringDuringAWait(t *testing.T) {
	for _, name := range []string{"LookupIP", "Account"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(name)
				m := newMock(op.success, problemReply(429, "Retry-After", "30"), succeed)
				c := m.client(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				start := time.Now()
				err := op.call(hiddenDeadline{ctx}, c)
				elapsed := time.Since(start)
				checkContextError(t, err, context.DeadlineExceeded, 429)
				if elapsed != 5*time.Second {
					t.Errorf("the call returned after %v of fake time, want 5s", elapsed)
				}
				if got := m.count(); got != 1 {
					t.Errorf("%d requests, want 1", got)
				}
			})
		})
	}
}

func checkContextError(t *testing.T, err, ctxErr error, status int) {
	t.Helper()
	if !errors.Is(err, ctxErr) {
		t.Fatalf("errors.Is(%v, %v) = false", err, ctxErr)
	}
	if status == 0 {
		var ce *synthient.ConnectionError
		if !errors.As(err, &ce) {
			t.Errorf("errors.As(%v, *ConnectionError) = false; the last error is lost", err)
		}
		return
	}
	var ae *synthient.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("errors.As(%v, *APIError) = false; the last error is lost", err)
	}
	if ae.Status != status {
		t.Errorf("APIError.Status = %d, want %d", ae.Status, status)
	}
}

// TestContextEndsDuringARequest checks a deadline that passes while a
// request waits for its response, on the first attempt and on a retry.
func TestContextEndsDuringARequest(t *testing.T) {
	for _, op := range operations() {
		t.Run(op.name+"/first_attempt", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newMock(op.success, reply{hang: true})
				c := m.client(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				start := time.Now()
				err := op.call(ctx, c)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v, want one matching context.DeadlineExceeded", err)
				}
				if elapsed := time.Since(start); elapsed != 5*time.Second {
					t.Errorf("returned after %v, want 5s", elapsed)
				}
				if base := baseOf(t, err); base.StopReason != retry.ContextDone || base.Attempts != 1 {
					t.Errorf("StopReason %q, Attempts %d; want %q, 1", base.StopReason, base.Attempts, retry.ContextDone)
				}
				if got := m.count(); got != 1 {
					t.Errorf("%d requests, want 1", got)
				}
			})
		})
		t.Run(op.name+"/retry", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newMock(op.success, problemReply(429, "Retry-After", "1"), reply{hang: true})
				c := m.client(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err := op.call(ctx, c)
				checkContextError(t, err, context.DeadlineExceeded, 429)
				if base := baseOf(t, err); base.StopReason != retry.ContextDone || base.Attempts != 2 {
					t.Errorf("StopReason %q, Attempts %d; want %q, 2", base.StopReason, base.Attempts, retry.ContextDone)
				}
				if got := m.count(); got != 2 {
					t.Errorf("%d requests, want 2", got)
				}
			})
		})
	}
}

// TestCancelledContextSendsNothing checks that a call with a context that
// is already done sends no request.
func TestCancelledContextSendsNothing(t *testing.T) {
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			m := newMock(op.success)
			c := m.client(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := op.call(ctx, c)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want one matching context.Canceled", err)
			}
			if got := m.count(); got != 0 {
				t.Errorf("%d requests were sent, want 0", got)
			}
		})
	}
}
