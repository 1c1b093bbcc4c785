package retry

import (
	"context"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// AttemptOf describes what an http.Client returned for one attempt.
func AttemptOf(resp *http.Response, err error) Attempt {
	if err != nil {
		return Attempt{Err: err, Failure: ClassifyError(err)}
	}
	return Attempt{
		Status:     resp.StatusCode,
		RetryAfter: resp.Header["Retry-After"],
		Date:       resp.Header.Get("Date"),
	}
}

// CheckRetry is a retryablehttp.CheckRetry that judges each attempt with
// c.Decide. It never returns an error: the caller gets the last response,
// or the last transport error, as they were.
func (c *Call) CheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	return c.Decide(ctx, AttemptOf(resp, err)).Retry, nil
}

// Backoff is a retryablehttp.Backoff that returns the wait of the last
// decision. It ignores its arguments: the wait was chosen, and checked
// against the deadline and the budget, when the attempt was judged.
func (c *Call) Backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return c.last.Wait
}

// Client returns a go-retryablehttp client that sends one call with c's
// policy over hc (the connection pool, shared by every call). Use a new
// Call, and so a new client, for each call: the count of retries and the
// waits belong to one call.
//
// The client logs nothing (go-retryablehttp's default logger prints URLs
// with their query) and, when it gives up, returns the last response and
// error as they were: go-retryablehttp's own give-up error drops the
// response. go-retryablehttp closes the idle connections of hc when it gives
// up; to keep a shared pool warm, give hc a Transport without a
// CloseIdleConnections method.
func (c *Call) Client(hc *http.Client) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   hc,
		RetryMax:     c.Policy.Retries(),
		CheckRetry:   c.CheckRetry,
		Backoff:      c.Backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
}
