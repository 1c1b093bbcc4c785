package retryhttp_test

// Tests of retryhttp.go: Client end to end against loopback
// servers (retries, give-up with the last response, deadlines, the
// caller's ResponseHandler, a pool that stays warm), the CheckRetry and
// Backoff adapters, AttemptOf, and NoReplay, which keeps net/http from
// sending a request again on its own.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/internal/retrytest"
	"github.com/synthient-go/synthient/retry/retryhttp"
)

// fastPolicy is New(c) with millisecond backoffs and the real clock, for
// calls that really wait.
func fastPolicy(c retry.Class) retry.Policy {
	p := retry.New(c)
	p.Base, p.Max = time.Millisecond, 2*time.Millisecond
	return p
}

// doGet sends a GET of url with Client(call, hc) and returns the status of
// the response (0 for none) with its body read and closed.
func doGet(t *testing.T, call *retry.Call, hc *http.Client, ctx context.Context, url string) (int, string, error) {
	t.Helper()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := retryhttp.Client(call, hc).Do(req)
	if resp == nil {
		return 0, "", err
	}
	defer func() { require.NoError(t, resp.Body.Close(), "closing the body") }()
	if err != nil {
		return resp.StatusCode, "", err
	}
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "reading the body")
	return resp.StatusCode, string(body), nil
}

func TestClientStandardRetries5xx(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	call := fastPolicy(retry.Standard).Start()
	status, body, err := doGet(t, call, nettest.HTTPClient(t, nil), context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 200, status, "status")
	assert.Equal(t, "ok", body, "body")
	assert.EqualValues(t, 3, arrivals.Load(), "arrivals")
	assert.Equal(t, 2, call.Retries(), "Retries")
	assert.Empty(t, call.Last().Reason, "Last().Reason: a success")
	assert.Equal(t, 3, call.Last().Attempt, "Last().Attempt")
}

func TestClientGivesUpWithLastResponse(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("busy %d", n), http.StatusBadGateway)
	})
	call := fastPolicy(retry.Standard).Start()
	status, body, err := doGet(t, call, nettest.HTTPClient(t, nil), context.Background(), srv.URL)
	require.NoError(t, err, "want the last response and no error")
	assert.Equal(t, 502, status, "status")
	assert.Equal(t, "busy 3\n", body, "body: the third 502's")
	assert.EqualValues(t, 3, arrivals.Load(), "arrivals")
	assert.Equal(t, retry.AttemptsExhausted, call.Last().Reason, "Last().Reason")
}

func TestClientBilledReturns5xx(t *testing.T) {
	t.Parallel()
	for _, code := range []int{500, 502, 503, 504} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				http.Error(w, "busy", code)
			})
			call := fastPolicy(retry.Billed).Start()
			status, body, err := doGet(t, call, nettest.HTTPClient(t, nil), context.Background(), srv.URL)
			require.NoError(t, err, "want the %d response", code)
			assert.Equal(t, code, status, "status")
			assert.Equal(t, "busy\n", body, "body")
			assert.EqualValues(t, 1, arrivals.Load(), "arrivals")
			assert.Equal(t, retry.MayHaveBeenProcessed, call.Last().Reason, "Last().Reason")
		})
	}
}

func TestClient429(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		class      retry.Class
		retryAfter string // "" for none
		arrivals   int32
		status     int
		reason     retry.StopReason
	}{
		{"standard without Retry-After", retry.Standard, "", 1, 429, retry.RateLimitedWithoutRetryAfter},
		{"billed without Retry-After", retry.Billed, "", 1, 429, retry.RateLimitedWithoutRetryAfter},
		{"standard unusable Retry-After", retry.Standard, "1.5", 1, 429, retry.RateLimitedWithoutRetryAfter},
		{"standard Retry-After above the max", retry.Standard, "61", 1, 429, retry.RetryAfterExceedsMax},
		{"billed Retry-After above the max", retry.Billed, "3600", 1, 429, retry.RetryAfterExceedsMax},
		{"standard Retry-After 0", retry.Standard, "0", 2, 200, ""},
		{"billed Retry-After 0", retry.Billed, "0", 2, 200, ""},
		{"never Retry-After 0", retry.Never, "0", 1, 429, retry.NotRetryable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					if tc.retryAfter != "" {
						w.Header().Set("Retry-After", tc.retryAfter)
					}
					http.Error(w, "slow down", http.StatusTooManyRequests)
					return
				}
				_, _ = io.WriteString(w, "ok")
			})
			call := fastPolicy(tc.class).Start()
			status, _, err := doGet(t, call, nettest.HTTPClient(t, nil), context.Background(), srv.URL)
			require.NoError(t, err)
			assert.Equal(t, tc.status, status, "status")
			assert.Equal(t, tc.arrivals, arrivals.Load(), "arrivals")
			assert.Equal(t, tc.reason, call.Last().Reason, "Last().Reason")
		})
	}
}

// TestClientDeadline: a context deadline shorter than the backoff stops
// the call at once with the last response, instead of a shortened wait.
// The deadline is minutes away, which only a hang reaches.
func TestClientDeadline(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	p := retry.New(retry.Standard)
	p.Base, p.Max = 10*time.Minute, 10*time.Minute // a 7.5 to 10 minute backoff
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := p.Start()
	status, _, err := doGet(t, call, nettest.HTTPClient(t, nil), ctx, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 503, status, "status")
	assert.EqualValues(t, 1, arrivals.Load(), "arrivals")
	d := call.Last()
	assert.Equal(t, retry.BackoffExceedsDeadline, d.Reason, "Last().Reason")
	assert.True(t, d.HasDeadline, "Last().HasDeadline")
	assert.GreaterOrEqual(t, d.Wait, 7*time.Minute+30*time.Second, "Last().Wait: the full wait")
}

func TestClientNetworkFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		class    retry.Class
		arrivals int32
		reason   retry.StopReason
	}{
		{retry.Billed, 1, retry.MayHaveBeenProcessed},
		{retry.Standard, 3, retry.AttemptsExhausted},
		{retry.Never, 1, retry.NotRetryable},
	} {
		t.Run(tc.class.String(), func(t *testing.T) {
			t.Parallel()
			srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close() // the request was read: the outcome is unknown
				}
			})
			call := fastPolicy(tc.class).Start()
			status, _, err := doGet(t, call, nettest.HTTPClient(t, nil), context.Background(), srv.URL)
			require.Error(t, err, "want the transport error")
			assert.Zero(t, status, "status: want no response")
			assert.Equal(t, tc.arrivals, arrivals.Load(), "arrivals")
			assert.Equal(t, tc.reason, call.Last().Reason, "Last().Reason")
		})
	}
}

// TestClientWithoutHTTPClient: Client(nil) sends over a copy of
// http.DefaultClient, through NoReplay(nil), which is NoReplay over
// http.DefaultTransport.
func TestClientWithoutHTTPClient(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close") // no idle connection is left in http.DefaultTransport
		_, _ = io.WriteString(w, "ok")
	})
	call := fastPolicy(retry.Standard).Start()
	rc := retryhttp.Client(call, nil)
	require.NotSame(t, http.DefaultClient, rc.HTTPClient, "Client(nil) uses http.DefaultClient itself")
	assert.NotNil(t, rc.HTTPClient.Transport, "no NoReplay transport")
	assert.Nil(t, http.DefaultClient.Transport, "http.DefaultClient was modified")

	status, body, err := doGet(t, call, nil, context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 200, status, "status")
	assert.Equal(t, "ok", body, "body")
	assert.EqualValues(t, 1, arrivals.Load(), "arrivals")
}

// cookieless is a CookieJar that keeps nothing, to tell a client's jar.
type cookieless struct{}

func (*cookieless) SetCookies(*url.URL, []*http.Cookie) {}
func (*cookieless) Cookies(*url.URL) []*http.Cookie     { return nil }

// TestClientAdapter checks the go-retryablehttp client Client builds and
// the adapters it plugs in: AttemptOf, CheckRetry and Backoff.
func TestClientAdapter(t *testing.T) {
	t.Parallel()
	jar := &cookieless{}
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	p, _ := retrytest.DetPolicy(retry.Standard, 1)
	p.MaxRetries = 100
	call := p.Start()
	rc := retryhttp.Client(call, hc)
	h := rc.HTTPClient
	require.NotSame(t, hc, h, "Client uses hc itself, not a copy")
	assert.Same(t, jar, h.Jar, "the copy's Jar")
	assert.Equal(t, time.Minute, h.Timeout, "the copy's Timeout")
	assert.NotNil(t, h.Transport, "the copy has no NoReplay transport")
	assert.Nil(t, hc.Transport, "hc was modified")
	assert.Equal(t, 16, rc.RetryMax, "RetryMax: MaxRetries capped")
	assert.Nil(t, rc.Logger, "Logger")
	assert.NotNil(t, rc.CheckRetry, "CheckRetry")
	assert.NotNil(t, rc.Backoff, "Backoff")
	assert.NotNil(t, rc.ErrorHandler, "ErrorHandler")

	resp := &http.Response{StatusCode: 429, Header: http.Header{
		"Retry-After": {"Sun, 06 Nov 1994 08:49:44 GMT"},
		"Date":        {"Sun, 06 Nov 1994 08:49:37 GMT"},
	}}
	assert.Equal(t, retry.Attempt{
		Status: 429, RetryAfter: []string{"Sun, 06 Nov 1994 08:49:44 GMT"}, Date: "Sun, 06 Nov 1994 08:49:37 GMT",
	}, retryhttp.AttemptOf(resp, nil), "AttemptOf(429 response)")
	ok, err := retryhttp.CheckRetry(call)(context.Background(), resp, nil)
	require.NoError(t, err, "CheckRetry(429 with Retry-After)")
	require.True(t, ok, "CheckRetry(429 with Retry-After)")
	assert.Equal(t, 7*time.Second, call.Last().Wait, "Wait: the 7s Retry-After measured against Date")
	// Backoff returns the decided wait whatever go-retryablehttp passes.
	assert.Equal(t, 7*time.Second, retryhttp.Backoff(call)(time.Hour, 2*time.Hour, 9, nil), "Backoff")

	ok, err = retryhttp.CheckRetry(call)(context.Background(), nil, &net.OpError{Op: "dial", Err: errors.New("refused")})
	require.NoError(t, err, "CheckRetry(dial error)")
	assert.True(t, ok, "CheckRetry(dial error)")
	assert.Equal(t, 2*time.Second, retryhttp.Backoff(call)(0, 0, 0, nil), "Backoff after a dial error")

	ok, err = retryhttp.CheckRetry(call)(context.Background(), &http.Response{StatusCode: 404, Header: http.Header{}}, nil)
	require.NoError(t, err, "CheckRetry(404)")
	assert.False(t, ok, "CheckRetry(404)")
	assert.Equal(t, retry.NotRetryable, call.Last().Reason, "Last().Reason after a 404")

	billed, _ := retrytest.DetPolicy(retry.Billed, 1)
	ok, err = retryhttp.CheckRetry(billed.Start())(context.Background(), nil, &url.Error{Op: "Get", URL: "x", Err: io.EOF})
	require.NoError(t, err, "billed CheckRetry(EOF)")
	assert.False(t, ok, "billed CheckRetry(EOF)")
}

// A billed call through Client is sent once per attempt the policy
// allowed, even over a shared http.Client whose Transport would replay it.
func TestClientNeverReplaysABilledCall(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			// The first request gets a keep-alive 200; the second, on the
			// reused connection, is read and its connection closed without
			// an answer. net/http's Transport re-sends a GET on its own
			// after such a close: a third arrival.
			srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 2 {
					if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
						_ = c.Close() // read, and not answered
					}
					return
				}
				_, _ = io.WriteString(w, "ok")
			})
			hc := nettest.HTTPClient(t, nil)
			do := func() error {
				var body any
				if method == http.MethodPost {
					body = []byte(`{"ips":["192.0.2.1"]}`)
				}
				req, err := retryablehttp.NewRequestWithContext(t.Context(), method, srv.URL+"/lookup/ip/192.0.2.1", body)
				require.NoError(t, err)
				if method == http.MethodPost {
					// net/http replays a POST that says it is idempotent.
					req.Header.Set("Idempotency-Key", "k")
				}
				call := retry.New(retry.Billed).Start()
				resp, err := retryhttp.Client(call, hc).Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					require.NoError(t, err, "reading the body")
					require.NoError(t, resp.Body.Close(), "closing the body")
				}
				return err
			}
			require.NoError(t, do(), "first call")
			err := do()
			require.Error(t, err, "second call succeeded: net/http re-sent it on a fresh connection")
			assert.False(t, retry.ClassifyError(err).NotSent, "ClassifyError(%v).NotSent: the request was read by the server", err)
			assert.EqualValues(t, 2, arrivals.Load(), "arrivals, want one per allowed attempt")
		})
	}
}

// recordingTransport answers every request with an empty 200 and keeps the
// request it was given.
type recordingTransport struct{ got *http.Request }

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.got = r
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
}

// TestNoReplay checks what NoReplay hands its RoundTripper: a copy of a
// request without a body, with SetNoReplayBody's empty body; a copy of one
// with a body, without its GetBody; and a request net/http cannot replay
// anyway (a body and no GetBody) as it is.
func TestNoReplay(t *testing.T) {
	t.Parallel()
	// Nothing listens there: a request that went anywhere but to the
	// recording transport would fail.
	target := "http://" + nettest.DeadAddr(t) + "/lookup/ip/192.0.2.1"
	cases := []struct {
		name      string
		req       func() (*http.Request, error)
		asIs      bool // sent as it is, not a copy
		emptyBody bool // the copy has SetNoReplayBody's empty body
	}{
		{"GET without a body", func() (*http.Request, error) {
			return http.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
		}, false, true},
		{"http.NoBody", func() (*http.Request, error) {
			return http.NewRequestWithContext(t.Context(), http.MethodGet, target, http.NoBody)
		}, false, true},
		{"a body with GetBody", func() (*http.Request, error) {
			return http.NewRequestWithContext(t.Context(), http.MethodPost, target, strings.NewReader(`{"ips":[]}`))
		}, false, false},
		{"a body without GetBody", func() (*http.Request, error) {
			return http.NewRequestWithContext(t.Context(), http.MethodPost, target, io.NopCloser(strings.NewReader(`{"ips":[]}`)))
		}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := tc.req()
			require.NoError(t, err)
			body, getBody, te := req.Body, req.GetBody != nil, req.TransferEncoding
			rec := &recordingTransport{}
			resp, err := retryhttp.NoReplay(rec).RoundTrip(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close(), "closing the body")
			got := rec.got
			require.NotNil(t, got, "NoReplay did not send through the RoundTripper it was given")
			assert.Nil(t, got.GetBody, "the request sent has a GetBody: net/http may replay it")
			if tc.asIs {
				assert.Same(t, req, got, "a request that cannot be replayed is sent as it is")
				return
			}
			assert.NotSame(t, req, got, "the caller's request was sent, not a copy")
			assert.Equal(t, body, req.Body, "the caller's request lost its body")
			assert.Equal(t, getBody, req.GetBody != nil, "the caller's request lost its GetBody")
			assert.Equal(t, te, req.TransferEncoding, "the caller's request was modified")
			if tc.emptyBody {
				assert.Equal(t, []string{"identity"}, got.TransferEncoding, "TransferEncoding of the copy")
				assert.Zero(t, got.ContentLength, "ContentLength of the copy")
				b, err := io.ReadAll(got.Body)
				require.NoError(t, err)
				assert.Empty(t, b, "the copy's body")
			} else {
				assert.Equal(t, req.Body, got.Body, "the copy's body")
			}
		})
	}
}

// TestSetNoReplayBody: the body is empty to every reader, closes without an
// error, and a request with it goes out without a body, a Content-Length
// or chunking.
func TestSetNoReplayBody(t *testing.T) {
	t.Parallel()
	r, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/account/me", nil)
	require.NoError(t, err)
	retryhttp.SetNoReplayBody(r)
	require.NotNil(t, r.Body)
	assert.Nil(t, r.GetBody, "GetBody")
	assert.Zero(t, r.ContentLength, "ContentLength")
	assert.Equal(t, []string{"identity"}, r.TransferEncoding, "TransferEncoding")

	n, err := r.Body.Read(make([]byte, 8))
	assert.Zero(t, n, "Read")
	assert.Equal(t, io.EOF, err, "Read")
	var buf bytes.Buffer
	n64, err := io.Copy(&buf, r.Body)
	assert.Zero(t, n64, "io.Copy")
	assert.NoError(t, err, "io.Copy")
	assert.NoError(t, r.Body.Close(), "Close")

	buf.Reset()
	require.NoError(t, r.Write(&buf))
	wire := buf.String()
	assert.True(t, strings.HasSuffix(wire, "\r\n\r\n"), "the request has a body: %q", wire)
	assert.NotContains(t, wire, "Content-Length", "on the wire")
	assert.NotContains(t, wire, "Transfer-Encoding", "on the wire")
}

// NoReplay leaves the caller's request as it was, and the body of a GET
// still goes out empty.
func TestNoReplayCopiesTheRequest(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got []string
	)
	srv, _ := nettest.CountingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Method+" "+string(b)+" "+strings.Join(r.TransferEncoding, ","))
	})
	rt := retryhttp.NoReplay(nettest.HTTPClient(t, nil).Transport)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close(), "closing the body")
	assert.Nil(t, req.Body, "the caller's request was modified: Body")
	assert.Nil(t, req.TransferEncoding, "the caller's request was modified: TransferEncoding")

	req, err = http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("x"))
	require.NoError(t, err)
	resp, err = rt.RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close(), "closing the body")
	assert.NotNil(t, req.GetBody, "the caller's request lost its GetBody")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"GET  ", "POST x "}, got, "what the server saw")
}

// Giving up does not close the idle connections of the shared pool
// (go-retryablehttp closes them when a call ends in an error): a warm
// connection to one host survives a failed call to another.
func TestClientKeepsThePoolWarm(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	dead := "http://" + nettest.DeadAddr(t)

	hc := nettest.HTTPClient(t, nil)
	get := func(url string) error {
		req, err := retryablehttp.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		resp, err := retryhttp.Client(retry.New(retry.Billed).Start(), hc).Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			require.NoError(t, err, "reading the body")
			require.NoError(t, resp.Body.Close(), "closing the body")
		}
		return err
	}
	require.NoError(t, get(srv.URL))
	require.Error(t, get(dead), "a call to a closed port succeeded")
	require.NoError(t, get(srv.URL))
	assert.EqualValues(t, 1, conns.Load(), "connections for two calls to one host: giving up emptied the pool")
}

// A response the caller's ResponseHandler rejects is never sent again,
// in any class: the response arrived.
func TestClientResponseHandlerErrorStops(t *testing.T) {
	t.Parallel()
	for _, c := range []retry.Class{retry.Billed, retry.Standard, retry.Never} {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			srv, arrivals := nettest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "not what the handler wants")
			})
			refused := errors.New("refused")
			req, err := retryablehttp.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			req.SetResponseHandler(func(*http.Response) error { return refused })
			call := fastPolicy(c).Start()
			resp, err := retryhttp.Client(call, nettest.HTTPClient(t, nil)).Do(req)
			if resp != nil {
				require.NoError(t, resp.Body.Close(), "closing the body")
			}
			require.ErrorIs(t, err, refused, "want the handler's error")
			assert.EqualValues(t, 1, arrivals.Load(), "arrivals")
			retrytest.RequireOutcome(t, call.Last(), retrytest.StopWith(retry.HookFailed))
		})
	}
	t.Run("AttemptOf", func(t *testing.T) {
		t.Parallel()
		assert.Equal(t, retry.Attempt{Status: 200, HandlerErr: context.Canceled},
			retryhttp.AttemptOf(&http.Response{StatusCode: 200}, context.Canceled), "AttemptOf(response, error)")
	})
}

// TestAttemptOfError: a transport error without a response is the
// attempt's Err, with retry.ClassifyError's Failure.
func TestAttemptOfError(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("refused")},
		&url.Error{Op: "Get", URL: "https://api.example/v4", Err: io.EOF},
		fmt.Errorf("attempt 1: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}),
	} {
		t.Run(err.Error(), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, retry.Attempt{Err: err, Failure: retry.ClassifyError(err)}, retryhttp.AttemptOf(nil, err),
				"AttemptOf: the error and its Failure")
		})
	}
}

// TestQuotaRefundOnceThroughRetryablehttp: go-retryablehttp calls CheckRetry
// twice on one response when the request has a ResponseHandler. The quota
// must still get back only what the call's retry took.
func TestQuotaRefundOnceThroughRetryablehttp(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	q := retry.NewQuota(500, 10, 5)
	p, _ := retrytest.DetPolicy(retry.Standard, 1)
	p.Base, p.Max = time.Millisecond, time.Millisecond
	p.Quota = q
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), retry.Attempt{Status: 503}), retrytest.Outcome{Retry: true}) // another call holds 10

	req, err := retryablehttp.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.SetResponseHandler(func(*http.Response) error { return nil })
	resp, err := retryhttp.Client(p.Start(), nettest.HTTPClient(t, nil)).Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close(), "closing the body")
	assert.Equal(t, 200, resp.StatusCode, "status")
	assert.EqualValues(t, 2, arrivals.Load(), "arrivals")
	assert.Equal(t, 490, q.Available(), "Available")
}
