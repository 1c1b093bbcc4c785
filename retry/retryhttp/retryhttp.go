// Package retryhttp runs the retry rules of package retry on
// go-retryablehttp: Client builds a go-retryablehttp client for one call,
// or CheckRetry and Backoff plug a retry.Call into a client of your own;
// NoReplay and SetNoReplayBody keep net/http's Transport from sending a
// request again on its own, which the policy did not allow.
//
//	call := retry.New(retry.Standard).Start() // one Call per call
//	resp, err := retryhttp.Client(call, sharedHTTPClient).Do(req)
//	if err == nil && call.Last().Reason != "" {
//		log.Printf("gave up: %s", call.Last().Reason)
//	}
//
// The functions of a Call belong to that call: a Call, and so the client
// or the hooks built from it, is not safe for concurrent use. NoReplay's
// RoundTripper is safe for concurrent use if the one it wraps is.
package retryhttp

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/synthient-go/synthient/retry"
)

// AttemptOf describes what an http.Client returned for one attempt. A
// response together with an error is go-retryablehttp's report that the
// request's ResponseHandler rejected the response: the attempt's HandlerErr,
// never a transport failure.
func AttemptOf(resp *http.Response, err error) retry.Attempt {
	if err != nil && resp != nil {
		return retry.Attempt{Status: resp.StatusCode, HandlerErr: err}
	}
	if err != nil {
		return retry.Attempt{Err: err, Failure: retry.ClassifyError(err)}
	}
	return retry.Attempt{
		Status:     resp.StatusCode,
		RetryAfter: resp.Header["Retry-After"],
		Date:       resp.Header.Get("Date"),
	}
}

// CheckRetry returns a retryablehttp.CheckRetry that judges each attempt
// with c.Decide. It never returns an error: the caller gets the last
// response, or the last transport error, as they were.
func CheckRetry(c *retry.Call) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		return c.Decide(ctx, AttemptOf(resp, err)).Retry, nil
	}
}

// Backoff returns a retryablehttp.Backoff that returns the wait of c's
// last decision. It ignores its arguments: the wait was chosen, and
// checked against the deadline and the budget, when the attempt was
// judged.
func Backoff(c *retry.Call) retryablehttp.Backoff {
	return func(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
		return c.Last().Wait
	}
}

// Client returns a go-retryablehttp client that sends one call with c's
// policy over hc (the connection pool, shared by every call; nil means
// http.DefaultClient). Use a new Call, and so a new client, for each call:
// the count of retries and the waits belong to one call.
//
// The client sends every attempt through NoReplay(hc.Transport), so the
// server sees one arrival per attempt the policy allowed, and so
// go-retryablehttp's give-up cannot close the idle connections of the
// shared pool. It logs nothing (go-retryablehttp's default logger prints
// URLs with their query) and, when it gives up, returns the last response
// and error as they were: go-retryablehttp's own give-up error drops the
// response.
func Client(c *retry.Call, hc *http.Client) *retryablehttp.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	own := *hc
	own.Transport = NoReplay(hc.Transport)
	return &retryablehttp.Client{
		HTTPClient:   &own,
		RetryMax:     c.Policy.Retries(),
		CheckRetry:   CheckRetry(c),
		Backoff:      Backoff(c),
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
}

// NoReplay returns a RoundTripper that sends each request through rt
// (http.DefaultTransport when nil) in a form net/http's Transport never
// sends again on its own. net/http silently re-sends a GET, and a request
// with a GetBody, when a reused keep-alive connection dies after the
// request was written: for a billed call that is a second charge the retry
// policy never allowed. NoReplay gives a request without a body the empty
// body of SetNoReplayBody and drops the GetBody of one with a body, on a
// copy: the caller's request is not modified.
//
// The RoundTripper has no CloseIdleConnections method: closing the idle
// connections of rt is left to its owner. It is safe for concurrent use if
// rt is.
func NoReplay(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return noReplay{rt}
}

type noReplay struct{ rt http.RoundTripper }

func (n noReplay) RoundTrip(r *http.Request) (*http.Response, error) {
	bodyless := r.Body == nil || r.Body == http.NoBody
	if !bodyless && r.GetBody == nil {
		return n.rt.RoundTrip(r) // not replayable as it is
	}
	own := *r
	if bodyless {
		SetNoReplayBody(&own)
	} else {
		own.GetBody = nil
	}
	return n.rt.RoundTrip(&own)
}

// SetNoReplayBody gives r, a request without a body, an empty body that
// net/http's Transport cannot replay: a request with a body and no GetBody
// is never re-sent on a fresh connection after a reused one died. The
// request still goes out without a body: its TransferEncoding is
// "identity", which Request.Write documents as sending the body as it is,
// without chunking or a Content-Length. That also spares net/http's probe
// of a body of unknown length (a goroutine and a timer per request).
func SetNoReplayBody(r *http.Request) {
	r.Body, r.GetBody, r.ContentLength, r.TransferEncoding = noReplayBody{}, nil, 0, identity
}

// noReplayBody is the empty body of SetNoReplayBody.
type noReplayBody struct{}

func (noReplayBody) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplayBody) Close() error             { return nil }

// WriteTo writes nothing: io.Copy then needs no buffer to send the body.
func (noReplayBody) WriteTo(io.Writer) (int64, error) { return 0, nil }

var identity = []string{"identity"}
