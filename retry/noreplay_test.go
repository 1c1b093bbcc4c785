package retry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/synthient-go/synthient/retry"
)

// dropSecond serves the first request with a keep-alive 200, reads the
// second (on the reused connection) and closes the connection without an
// answer, and answers any later request with a 200. net/http's Transport
// re-sends a GET on its own after such a close: the third arrival.
func dropSecond(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var arrivals atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrivals.Add(1) == 2 {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &arrivals
}

// A billed call through Call.Client is sent once per attempt the policy
// allowed, even over a shared http.Client whose Transport would replay it.
func TestClientNeverReplaysABilledCall(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			srv, arrivals := dropSecond(t)
			hc := testHTTPClient(t)
			do := func() (*http.Response, error) {
				var body any
				if method == http.MethodPost {
					body = []byte(`{"ips":["192.0.2.1"]}`)
				}
				req, err := retryablehttp.NewRequest(method, srv.URL+"/lookup/ip/192.0.2.1", body)
				if err != nil {
					t.Fatal(err)
				}
				if method == http.MethodPost {
					// net/http replays a POST that says it is idempotent.
					req.Header.Set("Idempotency-Key", "k")
				}
				call := retry.New(retry.Billed).Start()
				resp, err := call.Client(hc).Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				return resp, err
			}
			if _, err := do(); err != nil {
				t.Fatalf("first call: %v", err)
			}
			_, err := do()
			if err == nil {
				t.Fatal("second call succeeded: net/http re-sent it on a fresh connection")
			}
			if f := retry.ClassifyError(err); f.NotSent {
				t.Errorf("ClassifyError(%v) = %+v: the request was read by the server", err, f)
			}
			if n := arrivals.Load(); n != 2 {
				t.Errorf("%d arrivals, want 2 (one per allowed attempt)", n)
			}
		})
	}
}

// NoReplay leaves the caller's request as it was, and the body of a GET
// still goes out empty.
func TestNoReplayCopiesTheRequest(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+string(b)+" "+strings.Join(r.TransferEncoding, ","))
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rt := retry.NoReplay(tr)

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.Body != nil || req.TransferEncoding != nil {
		t.Errorf("the caller's request was modified: Body %v, TransferEncoding %v", req.Body, req.TransferEncoding)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
	resp, err = rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.GetBody == nil {
		t.Error("the caller's request lost its GetBody")
	}
	if want := []string{"GET  ", "POST x "}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("server saw %q, want %q", got, want)
	}
}

// Giving up does not close the idle connections of the shared pool
// (go-retryablehttp closes them when a call ends in an error): a warm
// connection to one host survives a failed call to another.
func TestClientKeepsThePoolWarm(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	hc := testHTTPClient(t)
	get := func(url string) error {
		req, _ := retryablehttp.NewRequest(http.MethodGet, url, nil)
		resp, err := retry.New(retry.Billed).Start().Client(hc).Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	if err := get(srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := get(dead); err == nil {
		t.Fatal("a call to a closed port succeeded")
	}
	if err := get(srv.URL); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for two calls to one host, want 1: giving up emptied the pool", n)
	}
}

// A response the caller's ResponseHandler rejects is never sent again,
// in any class: the response arrived.
func TestClientResponseHandlerErrorStops(t *testing.T) {
	for _, c := range []retry.Class{retry.Billed, retry.Standard, retry.Never} {
		t.Run(c.String(), func(t *testing.T) {
			srv, arrivals := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
				io.WriteString(w, "not what the handler wants")
			})
			refused := errors.New("refused")
			req, _ := retryablehttp.NewRequest(http.MethodGet, srv.URL, nil)
			req.SetResponseHandler(func(*http.Response) error { return refused })
			call := fastPolicy(c).Start()
			resp, err := call.Client(testHTTPClient(t)).Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if !errors.Is(err, refused) {
				t.Errorf("err = %v, want the handler's", err)
			}
			if n := arrivals.Load(); n != 1 {
				t.Errorf("%d arrivals, want 1", n)
			}
			if d := call.Last(); d.Retry || d.Reason != retry.HookFailed {
				t.Errorf("last decision %+v, want a stop with %q", d, retry.HookFailed)
			}
		})
	}
	a := retry.AttemptOf(&http.Response{StatusCode: 200}, context.Canceled)
	if a.HandlerErr == nil || a.Err != nil || a.Status != 200 {
		t.Errorf("AttemptOf(response, error) = %+v, want a HandlerErr", a)
	}
}
