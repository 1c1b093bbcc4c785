package retry_test

// Tests of quota.go: the retry quota's defaults and costs, what a stop
// and a success do to it, its refunds (once per success, never above the
// capacity), and its use by concurrent calls.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/internal/retrytest"
)

// quotaPolicy returns a deterministic Standard policy sharing q.
func quotaPolicy(q *retry.Quota) retry.Policy {
	p, _ := retrytest.DetPolicy(retry.Standard, 1)
	p.Base, p.Max = time.Millisecond, time.Millisecond
	p.Quota = q
	return p
}

// The documented defaults, pinned: the README and docs/retries.md state them.
func TestQuotaDefaults(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 500, retry.DefaultQuotaCapacity, "DefaultQuotaCapacity")
	assert.Equal(t, 10, retry.DefaultFailureCost, "DefaultFailureCost")
	assert.Equal(t, 0, retry.DefaultThrottleCost, "DefaultThrottleCost: a retry after a 429 is free")
	assert.Equal(t, 1, retry.SuccessCredit, "SuccessCredit")
}

// A success on a full quota does not push it above its capacity.
func TestQuotaCreditStopsAtCapacity(t *testing.T) {
	t.Parallel()
	q := retry.NewQuota(500, 10, 5)
	p := quotaPolicy(q)
	for range 3 {
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(200)), retrytest.Success)
	}
	assert.Equal(t, 500, q.Available(), "Available after successes on a full quota")
}

func TestQuotaNew(t *testing.T) {
	t.Parallel()
	q := retry.NewQuota(500, 10, 5)
	assert.Equal(t, 500, q.Capacity(), "Capacity")
	assert.Equal(t, 500, q.Available(), "Available")
	q = retry.NewQuota(0, 0, -3)
	require.Equal(t, 1, q.Capacity(), "NewQuota(0, 0, -3): Capacity")
	require.Equal(t, 1, q.Available(), "NewQuota(0, 0, -3): Available")
	// A failure cost below 1 is 1: one retry empties a 1-token quota. A
	// negative throttle cost is 0: a 429's retry stays free on it.
	p := quotaPolicy(q)
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.RetryIt)
	assert.Zero(t, q.Available(), "Available after a 1-token retry")
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.StopWith(retry.QuotaExhausted))
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(429, "1")), retrytest.RetryIt)
}

// TestQuotaFreeThrottle: with a throttle cost of 0 (the default) a retry
// after a 429 with a usable Retry-After takes nothing and is allowed on an
// empty quota; a retry after a failure still pays.
func TestQuotaFreeThrottle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		class   retry.Class
		empty   bool // spend the quota first
		attempt retry.Attempt
		want    retrytest.Outcome
		left    int
	}{
		{"429 on a full quota", retry.Standard, false, status(429, "1"), retrytest.RetryIt, 500},
		{"429, billed class", retry.Billed, false, status(429, "1"), retrytest.RetryIt, 500},
		{"429 on an empty quota", retry.Standard, true, status(429, "1"), retrytest.RetryIt, 0},
		{"503 still pays", retry.Standard, false, status(503), retrytest.RetryIt, 490},
		{"503 on an empty quota", retry.Standard, true, status(503), retrytest.StopWith(retry.QuotaExhausted), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := retry.NewQuota(retry.DefaultQuotaCapacity, retry.DefaultFailureCost, retry.DefaultThrottleCost)
			p := quotaPolicy(q)
			for tc.empty && q.Available() > 0 {
				retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.RetryIt)
			}
			p.Class = tc.class
			retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), tc.attempt), tc.want)
			assert.Equal(t, tc.left, q.Available(), "Available after the decision")
		})
	}
}

func TestQuotaCosts(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			q := retry.NewQuota(500, 10, 5)
			p := quotaPolicy(q)
			p.Class = tc.class
			retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), tc.attempt), retrytest.RetryIt)
			assert.Equal(t, 500-tc.cost, q.Available(), "Available after one retry")
		})
	}
}

// TestQuotaNoTokensWithoutRetry: a stop, for whatever reason, takes
// nothing.
func TestQuotaNoTokensWithoutRetry(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			q := retry.NewQuota(500, 10, 5)
			p := quotaPolicy(q)
			p.Class = tc.class
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx(t, p.Now())
			}
			retrytest.RequireOutcome(t, p.Start().Decide(ctx, tc.attempt), retrytest.StopWith(tc.want))
			assert.Equal(t, 500, q.Available(), "Available after a stop")
		})
	}

	t.Run("attempts exhausted", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		p.MaxRetries = 1
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.StopWith(retry.AttemptsExhausted))
		assert.Equal(t, 490, q.Available(), "Available: one retry")
	})
}

func TestQuotaExhausted(t *testing.T) {
	t.Parallel()
	q := retry.NewQuota(25, 10, 5)
	p := quotaPolicy(q)
	a, b, c := p.Start(), p.Start(), p.Start()
	retrytest.RequireOutcome(t, a.Decide(context.Background(), status(503)), retrytest.RetryIt) // 15 left
	retrytest.RequireOutcome(t, b.Decide(context.Background(), status(503)), retrytest.RetryIt) // 5 left
	// A failure retry costs 10: it no longer fits.
	d := c.Decide(context.Background(), status(503))
	retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.QuotaExhausted))
	assert.Positive(t, d.Wait, "Wait: the stopped retry's wait is reported")
	require.Zero(t, c.Retries(), "a quota stop changed Retries")
	require.Zero(t, c.Spent(), "a quota stop changed Spent")
	require.Equal(t, 5, q.Available(), "a quota stop changed Available")
	// A throttle retry costs 5: it still fits, and then the quota is empty.
	retrytest.RequireOutcome(t, c.Decide(context.Background(), status(429, "0")), retrytest.RetryIt)
	require.Zero(t, q.Available(), "Available")
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(429, "0")), retrytest.StopWith(retry.QuotaExhausted))
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), netFailure(retry.Failure{})), retrytest.StopWith(retry.QuotaExhausted))
	// An empty quota does not change the non-retryable answers.
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(404)), retrytest.StopWith(retry.NotRetryable))
	retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(200)), retrytest.Success)
}

func TestQuotaRefund(t *testing.T) {
	t.Parallel()
	t.Run("success after a retry refunds it", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		other := p.Start()
		retrytest.RequireOutcome(t, other.Decide(context.Background(), status(503)), retrytest.RetryIt) // holds 10
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)
		require.Equal(t, 480, q.Available(), "Available")
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success)
		require.Equal(t, 490, q.Available(), "Available after the retry succeeded")
		retrytest.RequireOutcome(t, other.Decide(context.Background(), retry.Attempt{Status: 307, Accepted: true}), retrytest.Success)
		assert.Equal(t, 500, q.Available(), "Available after an accepted answer")
	})

	t.Run("the successful retry's tokens are refunded", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)      // -10
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(429, "0")), retrytest.RetryIt) // -5
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success)      // +5
		assert.Equal(t, 490, q.Available(), "Available")
	})

	t.Run("success on the first attempt adds the success credit", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.RetryIt)
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success) // judged again
		assert.Equal(t, 490+retry.SuccessCredit, q.Available(), "Available")
	})

	t.Run("first-attempt successes refill a drained quota", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(20, 10, 5)
		p := quotaPolicy(q)
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.StopWith(retry.QuotaExhausted))
		for i := 0; i < 10; i++ {
			retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(200)), retrytest.Success)
		}
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), status(503)), retrytest.RetryIt)
	})

	t.Run("a failed call refunds nothing", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(404)), retrytest.StopWith(retry.NotRetryable))
		assert.Equal(t, 490, q.Available(), "Available")
	})

	t.Run("never above capacity", func(t *testing.T) {
		t.Parallel()
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success) // judged again
		assert.Equal(t, 500, q.Available(), "Available, want the capacity")
	})

	t.Run("a success refunds once", func(t *testing.T) {
		t.Parallel()
		// The same success judged twice (as go-retryablehttp does when the
		// request has a ResponseHandler) must not give back the tokens of
		// another call's retry.
		q := retry.NewQuota(500, 10, 5)
		p := quotaPolicy(q)
		other := p.Start()
		retrytest.RequireOutcome(t, other.Decide(context.Background(), status(503)), retrytest.RetryIt) // holds 10
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(200)), retrytest.Success)
		assert.Equal(t, 490, q.Available(), "Available: another call's retry still holds 10 tokens")
	})
}

// TestQuotaConcurrent runs many calls that share one quota (run it with
// -race): the tokens stay within [0, capacity] at every observation, and
// once every retry that took tokens succeeded, the quota is full again.
func TestQuotaConcurrent(t *testing.T) {
	t.Parallel()
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
					assert.Fail(t, "unexpected decision", "%+v", d) // not require: another goroutine
					return
				}
				observe()
			}
		}()
	}
	wg.Wait()
	require.Zero(t, outRange.Load(), "observations outside [0, %d]", q.Capacity())
	require.Equal(t, q.Capacity(), q.Available(), "Available after every retry succeeded")
	require.NotZero(t, retried.Load(), "no call retried")
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
	assert.EqualValues(t, 50, took.Load(), "retries that took tokens")
	assert.Zero(t, q.Available(), "tokens left")
	assert.Zero(t, outRange.Load(), "observations outside [0, capacity]")
}
