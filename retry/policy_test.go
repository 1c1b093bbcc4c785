package retry_test

// Tests of policy.go: the rules of each class, the backoff and its jitter,
// Retry-After against the backoff and its maximum, the retry count, the
// total-delay budget, the caller's deadline and context, and the
// allocation-free success path.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/internal/retrytest"
)

// TestDecideRules checks every row of docs/retries.md for each class, on
// the first attempt of a call made with the default policy.
func TestDecideRules(t *testing.T) {
	t.Parallel()
	var (
		notRetryable = retrytest.StopWith(retry.NotRetryable)
		noRetryAfter = retrytest.StopWith(retry.RateLimitedWithoutRetryAfter)
		mayHaveBeen  = retrytest.StopWith(retry.MayHaveBeenProcessed)
	)
	type row struct {
		name                    string
		attempt                 retry.Attempt
		billed, standard, never retrytest.Outcome
	}
	rows := []row{
		// 429: only a usable Retry-After makes it retryable, and never in Never.
		{"429 Retry-After 1", status(429, "1"), retrytest.RetryIt, retrytest.RetryIt, notRetryable},
		{"429 Retry-After 0", status(429, "0"), retrytest.RetryIt, retrytest.RetryIt, notRetryable},
		{"429 Retry-After HTTP-date", status(429, "Sun, 06 Nov 1994 08:49:37 GMT"), retrytest.RetryIt, retrytest.RetryIt, notRetryable},
		{"429 without Retry-After", status(429), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After empty", status(429, ""), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After garbage", status(429, "soon"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After negative", status(429, "-1"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After fraction", status(429, "1.5"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 two Retry-After values", status(429, "1", "2"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After non-GMT date", status(429, "Sun, 06 Nov 1994 08:49:37 +0000"), noRetryAfter, noRetryAfter, noRetryAfter},
		// The retryable 5xx: only Standard sends them again.
		{"500", status(500), mayHaveBeen, retrytest.RetryIt, notRetryable},
		{"502", status(502), mayHaveBeen, retrytest.RetryIt, notRetryable},
		{"503", status(503), mayHaveBeen, retrytest.RetryIt, notRetryable},
		{"504", status(504), mayHaveBeen, retrytest.RetryIt, notRetryable},
		{"503 with Retry-After", status(503, "1"), mayHaveBeen, retrytest.RetryIt, notRetryable},
		// Everything else that is not a success is returned at once.
		{"501", status(501), notRetryable, notRetryable, notRetryable},
		{"505", status(505), notRetryable, notRetryable, notRetryable},
		{"599", status(599), notRetryable, notRetryable, notRetryable},
		{"408", status(408), notRetryable, notRetryable, notRetryable},
		{"408 with Retry-After", status(408, "1"), notRetryable, notRetryable, notRetryable},
		{"400", status(400), notRetryable, notRetryable, notRetryable},
		{"401", status(401), notRetryable, notRetryable, notRetryable},
		{"402", status(402), notRetryable, notRetryable, notRetryable},
		{"403", status(403), notRetryable, notRetryable, notRetryable},
		{"404", status(404), notRetryable, notRetryable, notRetryable},
		{"422", status(422), notRetryable, notRetryable, notRetryable},
		{"301", status(301), notRetryable, notRetryable, notRetryable},
		{"302", status(302), notRetryable, notRetryable, notRetryable},
		{"304", status(304), notRetryable, notRetryable, notRetryable},
		{"307", status(307), notRetryable, notRetryable, notRetryable},
		{"308", status(308), notRetryable, notRetryable, notRetryable},
		{"307 accepted", retry.Attempt{Status: 307, Accepted: true}, retrytest.Success, retrytest.Success, retrytest.Success},
		{"302 accepted", retry.Attempt{Status: 302, Accepted: true}, retrytest.Success, retrytest.Success, retrytest.Success},
		// Success.
		{"200", status(200), retrytest.Success, retrytest.Success, retrytest.Success},
		{"201", status(201), retrytest.Success, retrytest.Success, retrytest.Success},
		{"204", status(204), retrytest.Success, retrytest.Success, retrytest.Success},
		{"206", status(206), retrytest.Success, retrytest.Success, retrytest.Success},
		{"299", status(299), retrytest.Success, retrytest.Success, retrytest.Success},
		{"200 with Retry-After", status(200, "1"), retrytest.Success, retrytest.Success, retrytest.Success},
		// Network failures: Standard retries all but TLS; Billed tells an
		// unknown outcome (may have been sent) from a request that never left.
		{"failure, may have been sent", netFailure(retry.Failure{}), mayHaveBeen, retrytest.RetryIt, notRetryable},
		{"timeout, may have been sent", netFailure(retry.Failure{Timeout: true}), mayHaveBeen, retrytest.RetryIt, notRetryable},
		{"failure, not sent", netFailure(retry.Failure{NotSent: true}), notRetryable, retrytest.RetryIt, notRetryable},
		{"timeout, not sent", netFailure(retry.Failure{NotSent: true, Timeout: true}), notRetryable, retrytest.RetryIt, notRetryable},
		{"TLS failure, not sent", netFailure(retry.Failure{TLS: true, NotSent: true}), notRetryable, notRetryable, notRetryable},
		// A TLS error that may have struck after the request was written
		// leaves the outcome unknown: Billed must say so.
		{"TLS failure, may have been sent", netFailure(retry.Failure{TLS: true}), mayHaveBeen, notRetryable, notRetryable},
		// An answer that is not HTTP: the server got the request, and would
		// answer the same again.
		{"malformed answer", netFailure(retry.Failure{Malformed: true}), mayHaveBeen, notRetryable, notRetryable},
	}
	classes := []struct {
		class retry.Class
		want  func(row) retrytest.Outcome
	}{
		{retry.Billed, func(r row) retrytest.Outcome { return r.billed }},
		{retry.Standard, func(r row) retrytest.Outcome { return r.standard }},
		{retry.Never, func(r row) retrytest.Outcome { return r.never }},
	}
	for _, c := range classes {
		for _, r := range rows {
			t.Run(c.class.String()+"/"+r.name, func(t *testing.T) {
				t.Parallel()
				p, _ := retrytest.DetPolicy(c.class, 1)
				call := p.Start()
				d := call.Decide(context.Background(), r.attempt)
				retrytest.RequireOutcome(t, d, c.want(r))
				assert.Equal(t, c.class, d.Class, "Decision.Class")
				assert.Equal(t, 1, d.Attempt, "Attempt")
				assert.Equal(t, 3, d.MaxAttempts, "MaxAttempts")
				if d.Retry {
					assert.Positive(t, d.Wait, "a retry's Wait")
					assert.Equal(t, 1, call.Retries(), "Retries")
					assert.Equal(t, d.Wait, call.Spent(), "Spent")
				} else {
					assert.Zero(t, call.Retries(), "a stop counted a retry")
					assert.Zero(t, call.Spent(), "a stop counted a wait")
				}
				assert.Equal(t, d, call.Last(), "Last()")
			})
		}
	}
}

func TestClassString(t *testing.T) {
	t.Parallel()
	for c, want := range map[retry.Class]string{retry.Billed: "billed", retry.Standard: "standard", retry.Never: "never", 7: "unknown"} {
		assert.Equal(t, want, c.String(), "Class(%d).String()", c)
	}
	var zero retry.Policy
	assert.Equal(t, retry.Billed, zero.Class, "the zero Policy's class")
}

// TestDecideRetryAfterNotReadOnNetworkFailure: a transport error has no
// response, so its Retry-After (if a caller passed one) is not used.
func TestDecideRetryAfterNotReadOnNetworkFailure(t *testing.T) {
	t.Parallel()
	p, _ := retrytest.DetPolicy(retry.Standard, 1)
	a := netFailure(retry.Failure{})
	a.RetryAfter = []string{"10"}
	d := p.Start().Decide(context.Background(), a)
	retrytest.RequireOutcome(t, d, retrytest.RetryIt)
	assert.False(t, d.HasRetryAfter, "HasRetryAfter")
	assert.Equal(t, time.Second, d.Wait, "Wait, want the 1s backoff")
}

func TestCeiling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		base, max time.Duration
		want      map[int]time.Duration
	}{
		{"defaults", 0, 0, map[int]time.Duration{
			0: time.Second, 1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second,
			4: 16 * time.Second, 5: 30 * time.Second, 6: 30 * time.Second, 62: 30 * time.Second,
			63: 30 * time.Second, 64: 30 * time.Second, 1000: 30 * time.Second, math.MaxInt: 30 * time.Second,
		}},
		{"negative fields are defaults", -time.Second, -time.Second, map[int]time.Duration{
			0: time.Second, 1: 2 * time.Second, 5: 30 * time.Second, 1000: 30 * time.Second,
		}},
		{"explicit", 100 * time.Millisecond, time.Second, map[int]time.Duration{
			0: 100 * time.Millisecond, 1: 200 * time.Millisecond, 2: 400 * time.Millisecond,
			3: 800 * time.Millisecond, 4: time.Second, 1000: time.Second,
		}},
		{"cap not a power of two of base", 3 * time.Second, 10 * time.Second, map[int]time.Duration{
			0: 3 * time.Second, 1: 6 * time.Second, 2: 10 * time.Second, 3: 10 * time.Second,
		}},
		// A backoff of exactly half the cap doubles to the cap (even cap)...
		{"cap exactly twice base", time.Second, 2 * time.Second, map[int]time.Duration{
			0: time.Second, 1: 2 * time.Second, 2: 2 * time.Second,
		}},
		// ...and, below an odd cap, to one nanosecond short of it: the
		// doubled value, not the cap.
		{"cap a nanosecond above twice base", time.Second, 2*time.Second + 1, map[int]time.Duration{
			0: time.Second, 1: 2 * time.Second, 2: 2*time.Second + 1, 1000: 2*time.Second + 1,
		}},
		{"only base set", 2 * time.Second, 0, map[int]time.Duration{
			0: 2 * time.Second, 3: 16 * time.Second, 4: 30 * time.Second, 1000: 30 * time.Second,
		}},
		{"only max set", 0, 5 * time.Second, map[int]time.Duration{
			0: time.Second, 2: 4 * time.Second, 3: 5 * time.Second, 1000: 5 * time.Second,
		}},
		{"max below base reads as base", 5 * time.Second, 2 * time.Second, map[int]time.Duration{
			0: 5 * time.Second, 1: 5 * time.Second, 1000: 5 * time.Second,
		}},
		{"base above default max, max unset", time.Minute, 0, map[int]time.Duration{
			0: time.Minute, 1: time.Minute, 1000: time.Minute,
		}},
		{"base near MaxInt64", maxDuration - 1, maxDuration, map[int]time.Duration{
			0: maxDuration - 1, 1: maxDuration, 2: maxDuration, 1000: maxDuration,
		}},
		{"base MaxInt64", maxDuration, 0, map[int]time.Duration{
			0: maxDuration, 1: maxDuration, 1000: maxDuration,
		}},
		{"half of MaxInt64", maxDuration/2 + 1, maxDuration, map[int]time.Duration{
			0: maxDuration/2 + 1, 1: maxDuration, 64: maxDuration, 1000: maxDuration,
		}},
		{"1ns base, huge cap", 1, maxDuration, map[int]time.Duration{
			0: 1, 10: 1024, 62: 1 << 62, 63: maxDuration, 64: maxDuration, 1000: maxDuration,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := retry.Policy{Base: tc.base, Max: tc.max}
			for k, want := range tc.want {
				assert.Equal(t, want, p.Ceiling(k), "Ceiling(%d)", k)
			}
		})
	}
}

func TestBackoffJitter(t *testing.T) {
	t.Parallel()
	p := retry.Policy{} // defaults: 1s base, 30s cap
	for k := 0; k < 8; k++ {
		b := p.Ceiling(k)
		lo := b - b/4
		cases := []struct {
			name string
			u    float64
			want time.Duration
		}{
			{"0 is the shortest", 0, lo},
			{"1 is the longest", 1, b},
			{"half", 0.5, lo + b/8},
			{"NaN", math.NaN(), b},
			{"+Inf", math.Inf(1), b},
			{"-Inf", math.Inf(-1), b},
			{"-0.5", -0.5, b},
			{"1.5", 1.5, b},
			{"just above 1", math.Nextafter(1, 2), b},
			{"just below 0", -math.SmallestNonzeroFloat64, b},
		}
		for _, tc := range cases {
			p.Rand = func() float64 { return tc.u }
			assert.Equal(t, tc.want, p.Backoff(k), "k=%d, draw %s (%v)", k, tc.name, tc.u)
		}
	}
}

// TestBackoffRange draws many waits, from an injected seeded source and from
// the default source, and checks each lies in [0.75*b(k), b(k)].
func TestBackoffRange(t *testing.T) {
	t.Parallel()
	src := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a seeded jitter source; shared: these subtests run one by one
	policies := map[string]retry.Policy{
		"defaults, seeded":        {Rand: src.Float64},
		"defaults, default rand":  {},
		"1ms/7ms, seeded":         {Base: time.Millisecond, Max: 7 * time.Millisecond, Rand: src.Float64},
		"odd nanoseconds, seeded": {Base: 3, Max: 1001, Rand: src.Float64},
	}
	for name, p := range policies {
		t.Run(name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for i := 0; i < 2000; i++ {
				k := i % 10
				b := p.Ceiling(k)
				got := p.Backoff(k)
				require.True(t, inJitterRange(got, b), "Backoff(%d) = %v, outside [0.75*%v, %v]", k, got, b, b)
				if k == 9 {
					seen[got] = true
				}
			}
			if p.Ceiling(9) >= 4 {
				assert.GreaterOrEqual(t, len(seen), 2, "200 draws at the cap gave one wait: no jitter")
			}
		})
	}
	// Huge backoffs must not overflow into a negative or shorter wait.
	for _, base := range []time.Duration{maxDuration, maxDuration - 1, maxDuration / 4 * 3, 1<<62 + 12345} {
		for _, u := range []float64{0, 0.25, 0.5, 0.999999, 1, math.NaN()} {
			t.Run(fmt.Sprintf("base %d draw %v", int64(base), u), func(t *testing.T) {
				t.Parallel()
				p := retry.Policy{Base: base, Rand: func() float64 { return u }}
				b := p.Ceiling(0)
				require.Equal(t, base, b, "Ceiling(0)")
				got := p.Backoff(0)
				assert.True(t, inJitterRange(got, b), "Backoff(0) = %d, outside [0.75*%d, %d]", got, b, b)
			})
		}
	}
}

// inJitterRange reports whether 0.75*b <= w <= b, without overflow.
func inJitterRange(w, b time.Duration) bool {
	return w <= b && w >= b-b/4
}

func TestWaitIsMaxOfBackoffAndRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		u        float64
		attempt  retry.Attempt
		wantWait time.Duration
	}{
		{"Retry-After longer than backoff is waited in full", 1, status(429, "3"), 3 * time.Second},
		{"Retry-After 0 gives the backoff", 1, status(429, "0"), time.Second},
		{"Retry-After shorter than the jittered backoff gives the backoff", 0, status(429, "0"), 750 * time.Millisecond},
		{"Retry-After between jittered and full backoff", 0, status(503, "1"), time.Second},
		{"Retry-After on a 503 is honoured", 1, status(503, "10"), 10 * time.Second},
		{"HTTP-date Retry-After is waited in full", 1, retry.Attempt{
			Status: 429, RetryAfter: []string{"Sun, 06 Nov 1994 08:49:49 GMT"},
			Date: "Sun, 06 Nov 1994 08:49:37 GMT",
		}, 12 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := retrytest.DetPolicy(retry.Standard, tc.u)
			d := p.Start().Decide(context.Background(), tc.attempt)
			retrytest.RequireOutcome(t, d, retrytest.RetryIt)
			assert.Equal(t, tc.wantWait, d.Wait, "Wait")
			assert.True(t, d.HasRetryAfter, "HasRetryAfter")
		})
	}

	t.Run("later retries, where the backoff has grown", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		p.MaxRetries = 5
		call := p.Start()
		wants := []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 8 * time.Second, 16 * time.Second}
		for i, want := range wants {
			d := call.Decide(context.Background(), status(503, "5"))
			retrytest.RequireOutcome(t, d, retrytest.RetryIt)
			assert.Equal(t, want, d.Wait, "retry %d: Wait, want max(b(%d), 5s)", i, i)
		}
		assert.Equal(t, 39*time.Second, call.Spent(), "Spent")
	})
}

func TestMaxRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		class         retry.Class
		maxRetries    int
		maxRetryAfter time.Duration
		attempt       retry.Attempt
		want          retrytest.Outcome
		wantWait      time.Duration
	}{
		{"61s stops", retry.Standard, 2, 0, status(429, "61"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"61s stops in billed", retry.Billed, 2, 0, status(429, "61"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"61s on a 503 stops", retry.Standard, 2, 0, status(503, "61"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"61s stops even with retries off", retry.Standard, 0, 0, status(429, "61"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"60s with retries off is attempts_exhausted", retry.Standard, 0, 0, status(429, "60"), retrytest.StopWith(retry.AttemptsExhausted), 0},
		{"exactly 60s is waited", retry.Standard, 2, 0, status(429, "60"), retrytest.RetryIt, 60 * time.Second},
		{"exactly 60s is waited in billed", retry.Billed, 2, 0, status(429, "60"), retrytest.RetryIt, 60 * time.Second},
		{"negative MaxRetryAfter is the default", retry.Standard, 2, -time.Second, status(429, "61"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"custom 5s: 6s stops", retry.Standard, 2, 5 * time.Second, status(429, "6"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"custom 5s: 5s is waited", retry.Standard, 2, 5 * time.Second, status(429, "5"), retrytest.RetryIt, 5 * time.Second},
		{"custom 2m: 61s is waited", retry.Standard, 2, 2 * time.Minute, status(429, "61"), retrytest.RetryIt, 61 * time.Second},
		{"custom 2m: 121s stops", retry.Standard, 2, 2 * time.Minute, status(429, "121"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"overflowing seconds exceed the max", retry.Standard, 2, 0, status(429, "99999999999999999999"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"overflowing seconds exceed a huge max", retry.Standard, 2, 1 << 62, status(429, "99999999999999999999"), retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
		{"HTTP-date 61s ahead stops", retry.Standard, 2, 0, retry.Attempt{
			Status: 429, RetryAfter: []string{"Sun, 06 Nov 1994 08:50:38 GMT"}, Date: "Sun, 06 Nov 1994 08:49:37 GMT",
		}, retrytest.StopWith(retry.RetryAfterExceedsMax), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := retrytest.DetPolicy(tc.class, 1)
			p.Base, p.Max = time.Millisecond, time.Millisecond
			p.MaxRetries = tc.maxRetries
			p.MaxRetryAfter = tc.maxRetryAfter
			d := p.Start().Decide(context.Background(), tc.attempt)
			retrytest.RequireOutcome(t, d, tc.want)
			assert.Equal(t, 1, d.Attempt, "Attempt")
			assert.True(t, d.HasRetryAfter, "HasRetryAfter: the parsed Retry-After is reported")
			if d.Retry {
				assert.Equal(t, tc.wantWait, d.Wait, "Wait")
			}
		})
	}

	t.Run("overflow is reported as the largest Duration", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		d := p.Start().Decide(context.Background(), status(429, "99999999999999999999"))
		assert.Equal(t, maxDuration, d.RetryAfter, "RetryAfter")
	})

	t.Run("a later attempt stops too", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.RetryIt)
		d := call.Decide(context.Background(), status(429, "61"))
		retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.RetryAfterExceedsMax))
		assert.Equal(t, 2, d.Attempt, "Attempt")
	})
}

func TestMaxRetries(t *testing.T) {
	t.Parallel()
	p := retry.New(retry.Standard)
	require.Equal(t, 2, p.MaxRetries, "New: MaxRetries")
	require.Equal(t, 2, p.Retries(), "New: Retries()")
	for _, c := range []retry.Class{retry.Billed, retry.Standard, retry.Never} {
		want := retry.Policy{Class: c, MaxRetries: 2, Base: time.Second, Max: 30 * time.Second, MaxRetryAfter: time.Minute}
		assert.Equal(t, want, retry.New(c), "New(%v): the documented defaults", c)
	}

	cases := []struct {
		name       string
		maxRetries int
		want       int // retries actually made
	}{
		{"default", retry.DefaultMaxRetries, 2},
		{"zero", 0, 0},
		{"negative", -1, 0},
		{"very negative", math.MinInt, 0},
		{"one", 1, 1},
		{"at the cap", 16, 16},
		{"above the cap", 17, 16},
		{"100", 100, 16},
		{"MaxInt", math.MaxInt, 16},
	}
	for _, tc := range cases {
		for _, a := range []struct {
			name    string
			attempt retry.Attempt
		}{
			{"503", status(503)},
			{"429 Retry-After 0", status(429, "0")},
			{"network failure", netFailure(retry.Failure{NotSent: true})},
		} {
			t.Run(tc.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				p, _ := retrytest.DetPolicy(retry.Standard, 1)
				p.Base, p.Max = time.Nanosecond, time.Nanosecond
				p.MaxRetries = tc.maxRetries
				require.Equal(t, tc.want, p.Retries(), "Retries()")
				call := p.Start()
				for i := 1; i <= tc.want; i++ {
					d := call.Decide(context.Background(), a.attempt)
					retrytest.RequireOutcome(t, d, retrytest.RetryIt)
					require.Equal(t, i, d.Attempt, "attempt %d: Attempt", i)
					require.Equal(t, tc.want+1, d.MaxAttempts, "attempt %d: MaxAttempts", i)
				}
				d := call.Decide(context.Background(), a.attempt)
				retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.AttemptsExhausted))
				assert.Equal(t, tc.want+1, d.Attempt, "last: Attempt")
				assert.Equal(t, tc.want+1, d.MaxAttempts, "last: MaxAttempts")
				assert.Equal(t, tc.want, call.Retries(), "Retries()")
				// Once exhausted it stays exhausted.
				retrytest.RequireOutcome(t, call.Decide(context.Background(), a.attempt), retrytest.StopWith(retry.AttemptsExhausted))
			})
		}
	}

	t.Run("zero-value policy makes no retries", func(t *testing.T) {
		t.Parallel()
		var call retry.Call
		d := call.Decide(context.Background(), status(429, "1"))
		retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.AttemptsExhausted))
		assert.Equal(t, 1, d.MaxAttempts, "MaxAttempts")
	})

	t.Run("success after retries reports its attempt", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(502)), retrytest.RetryIt)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(504)), retrytest.RetryIt)
		d := call.Decide(context.Background(), status(200))
		retrytest.RequireOutcome(t, d, retrytest.Success)
		assert.Equal(t, 3, d.Attempt, "Attempt")
		assert.Equal(t, 3, d.MaxAttempts, "MaxAttempts")
		assert.Zero(t, d.Wait, "Wait")
	})

	t.Run("Reset starts a new call", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		call := p.Start()
		call.Decide(context.Background(), status(503))
		call.Decide(context.Background(), status(503))
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(503)), retrytest.StopWith(retry.AttemptsExhausted))
		call.Reset(p)
		require.Zero(t, call.Retries(), "Retries after Reset")
		require.Zero(t, call.Spent(), "Spent after Reset")
		require.Zero(t, call.Last(), "Last after Reset")
		d := call.Decide(context.Background(), status(503))
		retrytest.RequireOutcome(t, d, retrytest.RetryIt)
		assert.Equal(t, 1, d.Attempt, "Attempt after Reset")
	})
}

func TestMaxTotalDelay(t *testing.T) {
	t.Parallel()
	// With draws of 1 the waits are 1s, 2s, 4s, 8s, ...
	cases := []struct {
		name    string
		budget  time.Duration
		retries int // retries allowed before budget_exhausted
	}{
		{"no budget", 0, 5},
		{"exactly filled by two waits", 3 * time.Second, 2},
		{"a nanosecond short of two waits", 3*time.Second - 1, 1},
		{"exactly filled by one wait", time.Second, 1},
		{"smaller than the first wait", time.Second - 1, 0},
		{"exactly filled by four waits", 15 * time.Second, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := retrytest.DetPolicy(retry.Standard, 1)
			p.MaxRetries = 5
			p.MaxTotalDelay = tc.budget
			call := p.Start()
			var spent time.Duration
			for i := 0; i < tc.retries; i++ {
				d := call.Decide(context.Background(), status(503))
				retrytest.RequireOutcome(t, d, retrytest.RetryIt)
				spent += d.Wait
			}
			require.Equal(t, spent, call.Spent(), "Spent")
			d := call.Decide(context.Background(), status(503))
			if tc.retries == 5 {
				retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.AttemptsExhausted))
				return
			}
			retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.BudgetExhausted))
			if tc.budget > 0 {
				assert.Greater(t, spent+d.Wait, tc.budget, "stopped although %v + %v fits the budget", spent, d.Wait)
			}
			assert.Equal(t, spent, call.Spent(), "a stop changed Spent")
			assert.Equal(t, tc.retries, call.Retries(), "a stop changed Retries")
		})
	}

	t.Run("Retry-After counts against the budget", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		p.MaxTotalDelay = 10 * time.Second
		call := p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(429, "6")), retrytest.RetryIt)
		d := call.Decide(context.Background(), status(429, "5"))
		retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.BudgetExhausted))
		assert.Equal(t, 5*time.Second, d.Wait, "Wait, want the 5s that did not fit")
		call = p.Start()
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(429, "6")), retrytest.RetryIt)
		retrytest.RequireOutcome(t, call.Decide(context.Background(), status(429, "4")), retrytest.RetryIt)
	})
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		base     time.Duration
		attempt  retry.Attempt
		left     time.Duration
		want     retrytest.Outcome
		wantWait time.Duration
	}{
		{"backoff fits", time.Second, status(503), 2 * time.Second, retrytest.RetryIt, time.Second},
		{"backoff exactly fits", time.Second, status(503), time.Second, retrytest.RetryIt, time.Second},
		{"backoff does not fit", time.Second, status(503), time.Second - 1, retrytest.StopWith(retry.BackoffExceedsDeadline), time.Second},
		{"network failure backoff does not fit", time.Second, netFailure(retry.Failure{}), 500 * time.Millisecond, retrytest.StopWith(retry.BackoffExceedsDeadline), time.Second},
		{"Retry-After fits", time.Second, status(429, "5"), 10 * time.Second, retrytest.RetryIt, 5 * time.Second},
		{"Retry-After exactly fits and is not shortened", time.Second, status(429, "5"), 5 * time.Second, retrytest.RetryIt, 5 * time.Second},
		{"Retry-After does not fit", time.Second, status(429, "5"), 5*time.Second - 1, retrytest.StopWith(retry.RetryAfterExceedsDeadline), 5 * time.Second},
		{"Retry-After far beyond", time.Second, status(429, "30"), 3 * time.Second, retrytest.StopWith(retry.RetryAfterExceedsDeadline), 30 * time.Second},
		{"Retry-After fits, backoff does not", 4 * time.Second, status(429, "1"), 2 * time.Second, retrytest.StopWith(retry.BackoffExceedsDeadline), 4 * time.Second},
		{"Retry-After 0, backoff does not fit", time.Second, status(429, "0"), 0, retrytest.StopWith(retry.BackoffExceedsDeadline), time.Second},
		{"deadline already passed on the injected clock", time.Second, status(503), -time.Second, retrytest.StopWith(retry.BackoffExceedsDeadline), time.Second},
		{"not retryable is not a deadline stop", time.Second, status(404), time.Nanosecond, retrytest.StopWith(retry.NotRetryable), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, now := retrytest.DetPolicy(retry.Standard, 1)
			p.Base = tc.base
			ctx := deadlineCtx(t, now, tc.left)
			d := p.Start().Decide(ctx, tc.attempt)
			retrytest.RequireOutcome(t, d, tc.want)
			assert.True(t, d.HasDeadline, "HasDeadline")
			assert.Equal(t, tc.left, d.TimeLeft, "TimeLeft")
			if tc.wantWait != 0 {
				assert.Equal(t, tc.wantWait, d.Wait, "Wait: the full wait, never shortened")
			}
			if d.Retry {
				assert.LessOrEqual(t, d.Wait, d.TimeLeft, "a retry's wait passes the deadline")
			}
		})
	}

	t.Run("no deadline", func(t *testing.T) {
		t.Parallel()
		p, _ := retrytest.DetPolicy(retry.Standard, 1)
		d := p.Start().Decide(context.Background(), status(429, "60"))
		retrytest.RequireOutcome(t, d, retrytest.RetryIt)
		assert.False(t, d.HasDeadline, "HasDeadline without a deadline")
		assert.Zero(t, d.TimeLeft, "TimeLeft without a deadline")
	})

	t.Run("TimeLeft follows the injected clock", func(t *testing.T) {
		t.Parallel()
		p, now := retrytest.DetPolicy(retry.Standard, 1)
		clock := now
		p.Now = func() time.Time { return clock }
		ctx := deadlineCtx(t, now, 10*time.Second)
		call := p.Start()
		d := call.Decide(ctx, status(503))
		retrytest.RequireOutcome(t, d, retrytest.RetryIt)
		require.Equal(t, 10*time.Second, d.TimeLeft, "TimeLeft")
		clock = clock.Add(d.Wait + 7500*time.Millisecond) // waited 1s, the attempt took 7.5s
		d = call.Decide(ctx, status(503))
		retrytest.RequireOutcome(t, d, retrytest.StopWith(retry.BackoffExceedsDeadline)) // the 2s backoff does not fit in 1.5s
		assert.Equal(t, 1500*time.Millisecond, d.TimeLeft, "TimeLeft")
		assert.Equal(t, 2*time.Second, d.Wait, "Wait")
	})
}

func TestContextDone(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	t.Cleanup(cancel2)
	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "expired": expired} {
		for _, class := range []retry.Class{retry.Billed, retry.Standard} {
			for _, a := range []struct {
				name    string
				attempt retry.Attempt
				want    retrytest.Outcome
			}{
				{"503", status(503), retrytest.StopWith(retry.ContextDone)},
				{"429 Retry-After 1", status(429, "1"), retrytest.StopWith(retry.ContextDone)},
				{"network failure", netFailure(retry.Failure{NotSent: true, Timeout: true}), retrytest.StopWith(retry.ContextDone)},
				{"200 still succeeds", status(200), retrytest.Success},
				{"accepted 307 still succeeds", retry.Attempt{Status: 307, Accepted: true}, retrytest.Success},
			} {
				t.Run(name+"/"+class.String()+"/"+a.name, func(t *testing.T) {
					t.Parallel()
					p, _ := retrytest.DetPolicy(class, 1)
					call := p.Start()
					retrytest.RequireOutcome(t, call.Decide(ctx, a.attempt), a.want)
					assert.Zero(t, call.Retries(), "Retries")
				})
			}
		}
	}
}

// TestDecideSuccessAllocatesNothing: judging a first attempt that
// succeeded, the hot path of every call, allocates nothing, with a quota
// and a deadline. Not parallel: testing.AllocsPerRun counts the
// allocations of the whole process, and so the check inside the measured
// function is a plain one that allocates nothing either.
func TestDecideSuccessAllocatesNothing(t *testing.T) { //nolint:paralleltest // testing.AllocsPerRun counts the whole process's allocations (see above)
	p := retry.New(retry.Standard)
	p.Quota = retry.NewQuota(500, 10, 5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	var call retry.Call
	for _, a := range []retry.Attempt{
		{Status: 200},
		{Status: 307, Accepted: true, RetryAfter: []string{"5"}},
	} {
		allocs := testing.AllocsPerRun(1000, func() {
			call.Reset(p)
			if d := call.Decide(ctx, a); d.Retry || d.Reason != "" {
				t.Fatalf("decision %+v, want success", d)
			}
		})
		assert.Zero(t, allocs, "Decide(%+v) allocations per call", a)
	}
}

func BenchmarkDecide(b *testing.B) {
	p := retry.New(retry.Standard)
	p.Quota = retry.NewQuota(500, 10, 5)
	ctx := context.Background()
	b.Run("success", func(b *testing.B) {
		b.ReportAllocs()
		var call retry.Call
		a := retry.Attempt{Status: 200}
		for b.Loop() {
			call.Reset(p)
			call.Decide(ctx, a)
		}
	})
	b.Run("retry-after-503", func(b *testing.B) {
		b.ReportAllocs()
		var call retry.Call
		a := retry.Attempt{Status: 503, RetryAfter: []string{"1"}}
		for b.Loop() {
			call.Reset(p)
			call.Decide(ctx, a)
		}
	})
}
