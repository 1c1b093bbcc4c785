package synthient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// outage runs calls concurrent Account calls against a server that answers
// 503 to everything, and returns the requests it received and the calls'
// errors.
func outage(t *testing.T, calls int, opts ...synthient.Option) (int64, []error) {
	t.Helper()
	return outageOf(t, http.StatusServiceUnavailable, calls, opts...)
}

// outageOf is outage with the status every request is answered with; a
// 429 carries Retry-After: 0.
func outageOf(t *testing.T, status, calls int, opts ...synthient.Option) (int64, []error) {
	t.Helper()
	var arrivals atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/api/v4", opts...)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Account(context.Background())
		}()
	}
	wg.Wait()
	return arrivals.Load(), errs
}

// TestRetryQuotaBoundsAnOutage: with the default quota (500 tokens, 10 per
// retry after a 5xx) and nothing succeeding, 200 calls send their 200 first
// attempts and exactly 500/10 = 50 retries in all, instead of 400.
func TestRetryQuotaBoundsAnOutage(t *testing.T) {
	const calls = 200
	arrivals, errs := outage(t, calls)
	const want = calls + 500/10 // the documented default quota
	if arrivals != want {
		t.Fatalf("the server got %d requests, want %d (one per call plus %d retries)", arrivals, want, want-calls)
	}
	retries, quotaStops := 0, 0
	for _, err := range errs {
		var apiErr *synthient.APIError
		var base *synthient.Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusServiceUnavailable || !errors.As(err, &base) {
			t.Fatalf("err = %v, want the last 503 as an *APIError", err)
		}
		retries += base.Attempts - 1
		switch base.StopReason {
		case retry.QuotaExhausted:
			quotaStops++
		case retry.AttemptsExhausted:
		default:
			t.Fatalf("stop reason %q, want quota_exhausted or attempts_exhausted", base.StopReason)
		}
	}
	if int64(calls+retries) != arrivals {
		t.Fatalf("the errors count %d retries, the server saw %d", retries, arrivals-calls)
	}
	if quotaStops < calls-retries/2 {
		t.Fatalf("%d calls stopped on the quota, want at least %d", quotaStops, calls-retries/2)
	}
}

// TestRetryQuotaBoundsThrottling: a retry after a 429 costs 5 of the 500
// tokens, so 200 rate-limited calls send 100 retries in all, not 400.
func TestRetryQuotaBoundsThrottling(t *testing.T) {
	const calls = 200
	arrivals, errs := outageOf(t, http.StatusTooManyRequests, calls)
	if want := int64(calls + 500/5); arrivals != want {
		t.Fatalf("the server got %d requests, want %d", arrivals, want)
	}
	for _, err := range errs {
		var apiErr *synthient.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests {
			t.Fatalf("err = %v, want the last 429 as an *APIError", err)
		}
	}
}

// TestWithoutRetryQuota: without the quota every call retries twice.
func TestWithoutRetryQuota(t *testing.T) {
	const calls = 200
	arrivals, _ := outage(t, calls, synthient.WithoutRetryQuota())
	if arrivals != 3*calls {
		t.Fatalf("the server got %d requests, want %d", arrivals, 3*calls)
	}
}

// TestWithRetryQuota: a custom quota bounds the retries by its own numbers.
func TestWithRetryQuota(t *testing.T) {
	const calls = 50
	arrivals, _ := outage(t, calls, synthient.WithRetryQuota(100, 20, 5))
	if want := int64(calls + 100/20); arrivals != want {
		t.Fatalf("the server got %d requests, want %d", arrivals, want)
	}
	for _, bad := range [][3]int{{0, 10, 5}, {500, 0, 5}, {500, 10, -1}} {
		if _, err := synthient.NewClient(testKey, synthient.WithRetryQuota(bad[0], bad[1], bad[2])); !errors.Is(err, synthient.ErrInvalidArgument) {
			t.Errorf("WithRetryQuota%v: err = %v, want ErrInvalidArgument", bad, err)
		}
	}
}
