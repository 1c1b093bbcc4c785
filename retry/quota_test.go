package retry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/synthient-go/synthient/retry"
)

// quotaPolicy returns a deterministic Standard policy sharing q.
func quotaPolicy(q *retry.Quota) retry.Policy {
	p, _ := detPolicy(retry.Standard, 1)
	p.Base, p.Max = time.Millisecond, time.Millisecond
	p.Quota = q
	return p
}

// The documented defaults, pinned: the README and docs/retries.md state them.
func TestQuotaDefaults(t *testing.T) {
	if retry.DefaultQuotaCapacity != 500 || retry.DefaultFailureCost != 10 || retry.DefaultThrottleCost != 5 || retry.SuccessCredit != 1 {
		t.Fatalf("defaults %d/%d/%d, credit %d; documented 500/10/5, credit 1",
			retry.DefaultQuotaCapacity, retry.DefaultFailureCost, retry.DefaultThrottleCost, retry.SuccessCredit)
	}
}

// A success on a full quota does not push it above its capacity.
func TestQuotaCreditStopsAtCapacity(t *testing.T) {
	q := retry.NewQuota(500, 10, 5)
	p := quotaPolicy(q)
	for range 3 {
		checkOutcome(t, p.Start().Decide(context.Background(), status(200)), success)
	}
	if q.Available() != 500 {
		t.Fatalf("Available = %d after successes on a full quota, want 500", q.Available())
	}
}

func TestQuotaNew(t *testing.T) {
	q := retry.NewQuota(500, 10, 5)
	if q.Capacity() != 500 || q.Available() != 500 {
		t.Fatalf("Capacity/Available = %d/%d, want 500/500", q.Capacity(), q.Available())
	}
	q = retry.NewQuota(0, 0, -3)
	if q.Capacity() != 1 || q.Available() != 1 {
		t.Fatalf("NewQuota(0, 0, -3): Capacity/Available = %d/%d, want 1/1", q.Capacity(), q.Available())
	}
	// Costs below 1 are 1: one retry empties a 1-token quota.
	p := quotaPolicy(q)
	checkOutcome(t, p.Start().Decide(context.Background(), status(503)), retryIt)
	if q.Available() != 0 {
		t.Fatalf("Available = %d after a 1-token retry, want 0", q.Available())
	}
	checkOutcome(t, p.Start().Decide(context.Background(), status(503)), stopWith(retry.QuotaExhausted))
}

func TestQuotaCosts(t *testing.T) {
	cases := []struct {
		name    string
		class   retry.Class
		attempt retry.Attempt
		cost    int
	}{
		{"503", retry.Standard, status(503), 10},
		{"500", retry.Standard, status(500), 10},
		{"503 with Retry-After", retry.Standard, status(503, "1"), 10},
		{"network failure", retry.Standard, netFailure(retry.Failure{}), 10},
		{"timeout", retry.Standard, netFailure(retry.Failure{Timeout: true}), 10},
		{"429 with Retry-After", retry.Standard, status(429, "1"), 5},
		{"429 with Retry-After, billed", retry.Billed, status(429, "1"), 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := retry.NewQuota(500, 10, 5)
			p := quotaPolicy(q)
			p.Class = tc.class
			checkOutcome(t, p.Start().Decide(context.Background(), tc.attempt), retryIt)
			if got := q.Available(); got != 500-tc.cost {
				t.Fatalf("Available = %d after one retry, want %d", got, 500-tc.cost)
			}
		})
	}
}

// TestQuotaNoTokensWithoutRetry: a stop, for whatever reason, takes
// nothing.
func TestQuotaNoTokensWithoutRetry(t *testing.T) {
	ctxDone, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		class   retry.Class
		ctx     func(*testing.T, time.Time) context.Context
		attempt retry.Attempt
		want    retry.StopReason
	}{
		{"billed 503", retry.Billed, nil, status(503), retry.MayHaveBeenProcessed},
		{"404", retry.Standard, nil, status(404), retry.NotRetryable},
		{"429 without Retry-After", retry.Standard, nil, status(429), retry.RateLimitedWithoutRetryAfter},
		{"Retry-After above the max", retry.Standard, nil, status(429, "61"), retry.RetryAfterExceedsMax},
		{"context done", retry.Standard, func(*testing.T, time.Time) context.Context { return ctxDone }, status(503), retry.ContextDone},
		{"deadline", retry.Standard, func(t *testing.T, now time.Time) context.Context {
			return deadlineCtx(t, now, time.Nanosecond)
		}, status(503), retry.BackoffExceedsDeadline},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := retry.NewQuota(500, 10, 5)
			p := quotaPolicy(q)
			p.Class = tc.class
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx(t, p.Now())
			}
			checkOutcome(t, p.Start().Decide(ctx, tc.attempt), stopWith(tc.want))
			if q.Available() != 500 {
				t.Fatalf("Available = %d after a stop, want 500", q.Available())
			}
		})
	}

	t.Run("attempts exhausted", func(t *testing.T) {
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		p.MaxRetries = 1
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)
		checkOutcome(t, call.Decide(context.Background(), status(503)), stopWith(retry.AttemptsExhausted))
		if q.Available() != 490 {
			t.Fatalf("Available = %d, want 490 (one retry)", q.Available())
		}
	})
}

func TestQuotaExhausted(t *testing.T) {
	q := retry.NewQuota(25, 10, 5)
	p := quotaPolicy(q)
	a, b, c := p.Start(), p.Start(), p.Start()
	checkOutcome(t, a.Decide(context.Background(), status(503)), retryIt) // 15 left
	checkOutcome(t, b.Decide(context.Background(), status(503)), retryIt) // 5 left
	// A failure retry costs 10: it no longer fits.
	d := c.Decide(context.Background(), status(503))
	checkOutcome(t, d, stopWith(retry.QuotaExhausted))
	if d.Wait <= 0 {
		t.Errorf("Wait = %v: the stopped retry's wait should be reported", d.Wait)
	}
	if c.Retries() != 0 || c.Spent() != 0 || q.Available() != 5 {
		t.Fatalf("a quota stop changed state: Retries=%d Spent=%v Available=%d", c.Retries(), c.Spent(), q.Available())
	}
	// A throttle retry costs 5: it still fits, and then the quota is empty.
	checkOutcome(t, c.Decide(context.Background(), status(429, "0")), retryIt)
	if q.Available() != 0 {
		t.Fatalf("Available = %d, want 0", q.Available())
	}
	checkOutcome(t, p.Start().Decide(context.Background(), status(429, "0")), stopWith(retry.QuotaExhausted))
	checkOutcome(t, p.Start().Decide(context.Background(), netFailure(retry.Failure{})), stopWith(retry.QuotaExhausted))
	// An empty quota does not change the non-retryable answers.
	checkOutcome(t, p.Start().Decide(context.Background(), status(404)), stopWith(retry.NotRetryable))
	checkOutcome(t, p.Start().Decide(context.Background(), status(200)), success)
}

func TestQuotaRefund(t *testing.T) {
	t.Run("success after a retry refunds it", func(t *testing.T) {
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		other := p.Start()
		checkOutcome(t, other.Decide(context.Background(), status(503)), retryIt) // holds 10
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)
		if q.Available() != 480 {
			t.Fatalf("Available = %d, want 480", q.Available())
		}
		checkOutcome(t, call.Decide(context.Background(), status(200)), success)
		if q.Available() != 490 {
			t.Fatalf("Available = %d after the retry succeeded, want 490", q.Available())
		}
		checkOutcome(t, other.Decide(context.Background(), retry.Attempt{Status: 307, Accepted: true}), success)
		if q.Available() != 500 {
			t.Fatalf("Available = %d after an accepted answer, want 500", q.Available())
		}
	})

	t.Run("the successful retry's tokens are refunded", func(t *testing.T) {
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)      // -10
		checkOutcome(t, call.Decide(context.Background(), status(429, "0")), retryIt) // -5
		checkOutcome(t, call.Decide(context.Background(), status(200)), success)      // +5
		if q.Available() != 490 {
			t.Fatalf("Available = %d, want 490", q.Available())
		}
	})

	t.Run("success on the first attempt adds the success credit", func(t *testing.T) {
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		checkOutcome(t, p.Start().Decide(context.Background(), status(503)), retryIt)
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(200)), success)
		checkOutcome(t, call.Decide(context.Background(), status(200)), success) // judged again
		if want := 490 + retry.SuccessCredit; q.Available() != want {
			t.Fatalf("Available = %d, want %d", q.Available(), want)
		}
	})

	t.Run("first-attempt successes refill a drained quota", func(t *testing.T) {
		q := retry.NewQuota(20, 10, 5)
		p := quotaPolicy(q)
		checkOutcome(t, p.Start().Decide(context.Background(), status(503)), retryIt)
		checkOutcome(t, p.Start().Decide(context.Background(), status(503)), retryIt)
		checkOutcome(t, p.Start().Decide(context.Background(), status(503)), stopWith(retry.QuotaExhausted))
		for i := 0; i < 10; i++ {
			checkOutcome(t, p.Start().Decide(context.Background(), status(200)), success)
		}
		checkOutcome(t, p.Start().Decide(context.Background(), status(503)), retryIt)
	})

	t.Run("a failed call refunds nothing", func(t *testing.T) {
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)
		checkOutcome(t, call.Decide(context.Background(), status(404)), stopWith(retry.NotRetryable))
		if q.Available() != 490 {
			t.Fatalf("Available = %d, want 490", q.Available())
		}
	})

	t.Run("never above capacity", func(t *testing.T) {
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)
		checkOutcome(t, call.Decide(context.Background(), status(200)), success)
		checkOutcome(t, call.Decide(context.Background(), status(200)), success) // judged again
		if q.Available() != 500 {
			t.Fatalf("Available = %d, want the capacity 500", q.Available())
		}
	})

	t.Run("a success refunds once", func(t *testing.T) {
		// The same success judged twice (as go-retryablehttp does when the
		// request has a ResponseHandler) must not give back the tokens of
		// another call's retry.
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		other := p.Start()
		checkOutcome(t, other.Decide(context.Background(), status(503)), retryIt) // holds 10
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)
		checkOutcome(t, call.Decide(context.Background(), status(200)), success)
		checkOutcome(t, call.Decide(context.Background(), status(200)), success)
		if q.Available() != 490 {
			t.Fatalf("Available = %d, want 490: another call's retry still holds 10 tokens", q.Available())
		}
	})
}

// TestQuotaRefundOnceThroughRetryablehttp: go-retryablehttp calls CheckRetry
// twice on one response when the request has a ResponseHandler. The quota
// must still get back only what the call's retry took.
func TestQuotaRefundOnceThroughRetryablehttp(t *testing.T) {
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrivals.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	q := retry.NewQuota(500, 10, 5)
	p := quotaPolicy(q)
	checkOutcome(t, p.Start().Decide(context.Background(), status(503)), retryIt) // another call holds 10

	req, err := retryablehttp.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetResponseHandler(func(*http.Response) error { return nil })
	resp, err := p.Start().Client(&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || arrivals.Load() != 2 {
		t.Fatalf("status %d after %d arrivals, want 200 after 2", resp.StatusCode, arrivals.Load())
	}
	if q.Available() != 490 {
		t.Fatalf("Available = %d, want 490", q.Available())
	}
}

// TestQuotaConcurrent runs many calls that share one quota (run it with
// -race): the tokens stay within [0, capacity] at every observation, and
// once every retry that took tokens succeeded, the quota is full again.
func TestQuotaConcurrent(t *testing.T) {
	q := retry.NewQuota(500, 10, 5)
	p := quotaPolicy(q)
	var (
		wg       sync.WaitGroup
		retried  atomic.Int64
		stopped  atomic.Int64
		outRange atomic.Int64
	)
	observe := func() {
		if n := q.Available(); n < 0 || n > q.Capacity() {
			outRange.Add(1)
		}
	}
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				call := p.Start()
				a := status(503)
				if (g+i)%3 == 0 {
					a = status(429, "0")
				}
				d := call.Decide(context.Background(), a)
				observe()
				switch {
				case d.Retry:
					retried.Add(1)
					call.Decide(context.Background(), status(200))
				case d.Reason == retry.QuotaExhausted:
					stopped.Add(1)
				default:
					t.Errorf("unexpected decision %+v", d)
					return
				}
				observe()
			}
		}()
	}
	wg.Wait()
	if outRange.Load() != 0 {
		t.Fatalf("%d observations outside [0, %d]", outRange.Load(), q.Capacity())
	}
	if q.Available() != q.Capacity() {
		t.Fatalf("Available = %d after every retry succeeded, want %d", q.Available(), q.Capacity())
	}
	if retried.Load() == 0 {
		t.Fatalf("no call retried")
	}
	t.Logf("%d retries, %d quota stops", retried.Load(), stopped.Load())

	// Takes alone drain the quota to exactly what is left after whole costs.
	q = retry.NewQuota(500, 10, 5)
	p = quotaPolicy(q)
	var took atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if p.Start().Decide(context.Background(), status(503)).Retry {
					took.Add(1)
				}
				observe()
			}
		}()
	}
	wg.Wait()
	if took.Load() != 50 || q.Available() != 0 || outRange.Load() != 0 {
		t.Fatalf("%d retries took tokens, %d left, %d bad observations; want 50, 0, 0", took.Load(), q.Available(), outRange.Load())
	}
}
