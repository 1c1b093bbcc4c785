package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/synthient-go/synthient/retry"
)

// testNow is the reference instant of the injected clocks. It lies a day
// ahead of the real clock so that a context deadline built from it never
// expires (in real time) while a test runs: deadline checks then depend on
// the injected clock only.
func testNow() time.Time { return time.Now().Add(24 * time.Hour).Round(0) }

// detPolicy returns retry.New(c) with a fixed clock and a jitter source
// that always draws u, so every wait is known in advance.
func detPolicy(c retry.Class, u float64) (retry.Policy, time.Time) {
	now := testNow()
	p := retry.New(c)
	p.Rand = func() float64 { return u }
	p.Now = func() time.Time { return now }
	return p, now
}

// deadlineCtx returns a context whose deadline lies d after the injected
// clock's now.
func deadlineCtx(t *testing.T, now time.Time, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(d))
	t.Cleanup(cancel)
	return ctx
}

func status(code int, retryAfter ...string) retry.Attempt {
	return retry.Attempt{Status: code, RetryAfter: retryAfter}
}

func netFailure(f retry.Failure) retry.Attempt {
	return retry.Attempt{Err: errors.New("connection failed"), Failure: f}
}

// outcome is what a decision must say: retry or not, and why it stops.
type outcome struct {
	retry  bool
	reason retry.StopReason
}

var (
	retryIt = outcome{retry: true}
	success = outcome{}
)

func stopWith(r retry.StopReason) outcome { return outcome{reason: r} }

func checkOutcome(t *testing.T, d retry.Decision, want outcome) {
	t.Helper()
	if d.Retry != want.retry || d.Reason != want.reason {
		t.Fatalf("decision = {Retry: %v, Reason: %q}, want {Retry: %v, Reason: %q} (full decision %+v)",
			d.Retry, d.Reason, want.retry, want.reason, d)
	}
	if d.Retry && d.Reason != "" {
		t.Fatalf("a retry carries stop reason %q", d.Reason)
	}
}

// TestDecideRules checks every row of docs/retries.md for each class, on
// the first attempt of a call made with the default policy.
func TestDecideRules(t *testing.T) {
	var (
		notRetryable = stopWith(retry.NotRetryable)
		noRetryAfter = stopWith(retry.RateLimitedWithoutRetryAfter)
		mayHaveBeen  = stopWith(retry.MayHaveBeenProcessed)
	)
	type row struct {
		name                    string
		attempt                 retry.Attempt
		billed, standard, never outcome
	}
	rows := []row{
		// 429: only a usable Retry-After makes it retryable, and never in Never.
		{"429 Retry-After 1", status(429, "1"), retryIt, retryIt, notRetryable},
		{"429 Retry-After 0", status(429, "0"), retryIt, retryIt, notRetryable},
		{"429 Retry-After HTTP-date", status(429, "Sun, 06 Nov 1994 08:49:37 GMT"), retryIt, retryIt, notRetryable},
		{"429 without Retry-After", status(429), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After empty", status(429, ""), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After garbage", status(429, "soon"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After negative", status(429, "-1"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After fraction", status(429, "1.5"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 two Retry-After values", status(429, "1", "2"), noRetryAfter, noRetryAfter, noRetryAfter},
		{"429 Retry-After non-GMT date", status(429, "Sun, 06 Nov 1994 08:49:37 +0000"), noRetryAfter, noRetryAfter, noRetryAfter},
		// The retryable 5xx: only Standard sends them again.
		{"500", status(500), mayHaveBeen, retryIt, notRetryable},
		{"502", status(502), mayHaveBeen, retryIt, notRetryable},
		{"503", status(503), mayHaveBeen, retryIt, notRetryable},
		{"504", status(504), mayHaveBeen, retryIt, notRetryable},
		{"503 with Retry-After", status(503, "1"), mayHaveBeen, retryIt, notRetryable},
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
		{"307 accepted", retry.Attempt{Status: 307, Accepted: true}, success, success, success},
		{"302 accepted", retry.Attempt{Status: 302, Accepted: true}, success, success, success},
		// Success.
		{"200", status(200), success, success, success},
		{"201", status(201), success, success, success},
		{"204", status(204), success, success, success},
		{"206", status(206), success, success, success},
		{"299", status(299), success, success, success},
		{"200 with Retry-After", status(200, "1"), success, success, success},
		// Network failures: Standard retries all but TLS; Billed tells an
		// unknown outcome (may have been sent) from a request that never left.
		{"failure, may have been sent", netFailure(retry.Failure{}), mayHaveBeen, retryIt, notRetryable},
		{"timeout, may have been sent", netFailure(retry.Failure{Timeout: true}), mayHaveBeen, retryIt, notRetryable},
		{"failure, not sent", netFailure(retry.Failure{NotSent: true}), notRetryable, retryIt, notRetryable},
		{"timeout, not sent", netFailure(retry.Failure{NotSent: true, Timeout: true}), notRetryable, retryIt, notRetryable},
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
		want  func(row) outcome
	}{
		{retry.Billed, func(r row) outcome { return r.billed }},
		{retry.Standard, func(r row) outcome { return r.standard }},
		{retry.Never, func(r row) outcome { return r.never }},
	}
	for _, c := range classes {
		for _, r := range rows {
			t.Run(c.class.String()+"/"+r.name, func(t *testing.T) {
				p, _ := detPolicy(c.class, 1)
				call := p.Start()
				d := call.Decide(context.Background(), r.attempt)
				want := c.want(r)
				checkOutcome(t, d, want)
				if d.Class != c.class {
					t.Errorf("Decision.Class = %v, want %v", d.Class, c.class)
				}
				if d.Attempt != 1 || d.MaxAttempts != 3 {
					t.Errorf("Attempt/MaxAttempts = %d/%d, want 1/3", d.Attempt, d.MaxAttempts)
				}
				if d.Retry {
					if d.Wait <= 0 {
						t.Errorf("retry with Wait %v", d.Wait)
					}
					if call.Retries() != 1 || call.Spent() != d.Wait {
						t.Errorf("Retries/Spent = %d/%v, want 1/%v", call.Retries(), call.Spent(), d.Wait)
					}
				} else if call.Retries() != 0 || call.Spent() != 0 {
					t.Errorf("a stop counted a retry: Retries/Spent = %d/%v", call.Retries(), call.Spent())
				}
				if call.Last() != d {
					t.Errorf("Last() = %+v, want %+v", call.Last(), d)
				}
			})
		}
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[retry.Class]string{retry.Billed: "billed", retry.Standard: "standard", retry.Never: "never", 7: "unknown"} {
		if got := c.String(); got != want {
			t.Errorf("Class(%d).String() = %q, want %q", c, got, want)
		}
	}
	var zero retry.Policy
	if zero.Class != retry.Billed {
		t.Errorf("zero Policy has class %v, want billed", zero.Class)
	}
}

// TestDecideRetryAfterNotReadOnNetworkFailure: a transport error has no
// response, so its Retry-After (if a caller passed one) is not used.
func TestDecideRetryAfterNotReadOnNetworkFailure(t *testing.T) {
	p, _ := detPolicy(retry.Standard, 1)
	a := netFailure(retry.Failure{})
	a.RetryAfter = []string{"10"}
	d := p.Start().Decide(context.Background(), a)
	checkOutcome(t, d, retryIt)
	if d.HasRetryAfter || d.Wait != time.Second {
		t.Fatalf("HasRetryAfter=%v Wait=%v, want false and the 1s backoff", d.HasRetryAfter, d.Wait)
	}
}

func TestCeiling(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
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
		{"base near MaxInt64", maxDur - 1, maxDur, map[int]time.Duration{
			0: maxDur - 1, 1: maxDur, 2: maxDur, 1000: maxDur,
		}},
		{"base MaxInt64", maxDur, 0, map[int]time.Duration{
			0: maxDur, 1: maxDur, 1000: maxDur,
		}},
		{"half of MaxInt64", maxDur/2 + 1, maxDur, map[int]time.Duration{
			0: maxDur/2 + 1, 1: maxDur, 64: maxDur, 1000: maxDur,
		}},
		{"1ns base, huge cap", 1, maxDur, map[int]time.Duration{
			0: 1, 10: 1024, 62: 1 << 62, 63: maxDur, 64: maxDur, 1000: maxDur,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := retry.Policy{Base: tc.base, Max: tc.max}
			for k, want := range tc.want {
				if got := p.Ceiling(k); got != want {
					t.Errorf("Ceiling(%d) = %v, want %v", k, got, want)
				}
			}
		})
	}
}

func TestBackoffJitter(t *testing.T) {
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
			if got := p.Backoff(k); got != tc.want {
				t.Errorf("k=%d, draw %s (%v): Backoff = %v, want %v", k, tc.name, tc.u, got, tc.want)
			}
		}
	}
}

// TestBackoffRange draws many waits, from an injected seeded source and from
// the default source, and checks each lies in [0.75*b(k), b(k)].
func TestBackoffRange(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	src := rand.New(rand.NewPCG(1, 2))
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
				if !inJitterRange(got, b) {
					t.Fatalf("Backoff(%d) = %v, outside [0.75*%v, %v]", k, got, b, b)
				}
				if k == 9 {
					seen[got] = true
				}
			}
			if len(seen) < 2 && p.Ceiling(9) >= 4 {
				t.Errorf("200 draws at the cap gave one wait: no jitter")
			}
		})
	}
	// Huge backoffs must not overflow into a negative or shorter wait.
	for _, base := range []time.Duration{maxDur, maxDur - 1, maxDur / 4 * 3, 1<<62 + 12345} {
		for _, u := range []float64{0, 0.25, 0.5, 0.999999, 1, math.NaN()} {
			t.Run(fmt.Sprintf("base %d draw %v", int64(base), u), func(t *testing.T) {
				p := retry.Policy{Base: base, Rand: func() float64 { return u }}
				b := p.Ceiling(0)
				if b != base {
					t.Fatalf("Ceiling(0) = %v, want %v", b, base)
				}
				if got := p.Backoff(0); !inJitterRange(got, b) {
					t.Fatalf("Backoff(0) = %d, outside [0.75*%d, %d]", got, b, b)
				}
			})
		}
	}
}

// inJitterRange reports whether 0.75*b <= w <= b, without overflow.
func inJitterRange(w, b time.Duration) bool {
	return w <= b && w >= b-b/4
}

func TestWaitIsMaxOfBackoffAndRetryAfter(t *testing.T) {
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
			p, _ := detPolicy(retry.Standard, tc.u)
			d := p.Start().Decide(context.Background(), tc.attempt)
			checkOutcome(t, d, retryIt)
			if d.Wait != tc.wantWait {
				t.Fatalf("Wait = %v, want %v", d.Wait, tc.wantWait)
			}
			if !d.HasRetryAfter {
				t.Fatalf("HasRetryAfter = false")
			}
		})
	}

	// The rule holds on later retries too, where the backoff has grown.
	p, _ := detPolicy(retry.Standard, 1)
	p.MaxRetries = 5
	call := p.Start()
	wants := []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 8 * time.Second, 16 * time.Second}
	for i, want := range wants {
		d := call.Decide(context.Background(), status(503, "5"))
		checkOutcome(t, d, retryIt)
		if d.Wait != want {
			t.Errorf("retry %d: Wait = %v, want max(b(%d), 5s) = %v", i, d.Wait, i, want)
		}
	}
	if want := 39 * time.Second; call.Spent() != want {
		t.Errorf("Spent = %v, want %v", call.Spent(), want)
	}
}

func TestMaxRetryAfter(t *testing.T) {
	cases := []struct {
		name          string
		class         retry.Class
		maxRetries    int
		maxRetryAfter time.Duration
		attempt       retry.Attempt
		want          outcome
		wantWait      time.Duration
	}{
		{"61s stops", retry.Standard, 2, 0, status(429, "61"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"61s stops in billed", retry.Billed, 2, 0, status(429, "61"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"61s on a 503 stops", retry.Standard, 2, 0, status(503, "61"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"61s stops even with retries off", retry.Standard, 0, 0, status(429, "61"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"60s with retries off is attempts_exhausted", retry.Standard, 0, 0, status(429, "60"), stopWith(retry.AttemptsExhausted), 0},
		{"exactly 60s is waited", retry.Standard, 2, 0, status(429, "60"), retryIt, 60 * time.Second},
		{"exactly 60s is waited in billed", retry.Billed, 2, 0, status(429, "60"), retryIt, 60 * time.Second},
		{"negative MaxRetryAfter is the default", retry.Standard, 2, -time.Second, status(429, "61"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"custom 5s: 6s stops", retry.Standard, 2, 5 * time.Second, status(429, "6"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"custom 5s: 5s is waited", retry.Standard, 2, 5 * time.Second, status(429, "5"), retryIt, 5 * time.Second},
		{"custom 2m: 61s is waited", retry.Standard, 2, 2 * time.Minute, status(429, "61"), retryIt, 61 * time.Second},
		{"custom 2m: 121s stops", retry.Standard, 2, 2 * time.Minute, status(429, "121"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"overflowing seconds exceed the max", retry.Standard, 2, 0, status(429, "99999999999999999999"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"overflowing seconds exceed a huge max", retry.Standard, 2, 1 << 62, status(429, "99999999999999999999"), stopWith(retry.RetryAfterExceedsMax), 0},
		{"HTTP-date 61s ahead stops", retry.Standard, 2, 0, retry.Attempt{
			Status: 429, RetryAfter: []string{"Sun, 06 Nov 1994 08:50:38 GMT"}, Date: "Sun, 06 Nov 1994 08:49:37 GMT",
		}, stopWith(retry.RetryAfterExceedsMax), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := detPolicy(tc.class, 1)
			p.Base, p.Max = time.Millisecond, time.Millisecond
			p.MaxRetries = tc.maxRetries
			p.MaxRetryAfter = tc.maxRetryAfter
			d := p.Start().Decide(context.Background(), tc.attempt)
			checkOutcome(t, d, tc.want)
			if d.Attempt != 1 {
				t.Errorf("Attempt = %d, want 1", d.Attempt)
			}
			if !d.HasRetryAfter {
				t.Errorf("HasRetryAfter = false, want the parsed Retry-After reported")
			}
			if d.Retry && d.Wait != tc.wantWait {
				t.Errorf("Wait = %v, want %v", d.Wait, tc.wantWait)
			}
		})
	}

	t.Run("overflow is reported as the largest Duration", func(t *testing.T) {
		p, _ := detPolicy(retry.Standard, 1)
		d := p.Start().Decide(context.Background(), status(429, "99999999999999999999"))
		if d.RetryAfter != time.Duration(math.MaxInt64) {
			t.Fatalf("RetryAfter = %v, want the largest Duration", d.RetryAfter)
		}
	})

	t.Run("a later attempt stops too", func(t *testing.T) {
		p, _ := detPolicy(retry.Standard, 1)
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(503)), retryIt)
		d := call.Decide(context.Background(), status(429, "61"))
		checkOutcome(t, d, stopWith(retry.RetryAfterExceedsMax))
		if d.Attempt != 2 {
			t.Errorf("Attempt = %d, want 2", d.Attempt)
		}
	})
}

func TestMaxRetries(t *testing.T) {
	if p := retry.New(retry.Standard); p.MaxRetries != 2 || p.Retries() != 2 {
		t.Fatalf("New: MaxRetries=%d Retries()=%d, want 2", p.MaxRetries, p.Retries())
	}
	for _, c := range []retry.Class{retry.Billed, retry.Standard, retry.Never} {
		p := retry.New(c)
		if p.Class != c || p.Base != time.Second || p.Max != 30*time.Second || p.MaxRetryAfter != time.Minute || p.MaxTotalDelay != 0 {
			t.Errorf("New(%v) = %+v, want the documented defaults", c, p)
		}
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
				p, _ := detPolicy(retry.Standard, 1)
				p.Base, p.Max = time.Nanosecond, time.Nanosecond
				p.MaxRetries = tc.maxRetries
				if got := p.Retries(); got != tc.want {
					t.Fatalf("Retries() = %d, want %d", got, tc.want)
				}
				call := p.Start()
				for i := 1; i <= tc.want; i++ {
					d := call.Decide(context.Background(), a.attempt)
					checkOutcome(t, d, retryIt)
					if d.Attempt != i || d.MaxAttempts != tc.want+1 {
						t.Fatalf("attempt %d: Attempt/MaxAttempts = %d/%d, want %d/%d", i, d.Attempt, d.MaxAttempts, i, tc.want+1)
					}
				}
				d := call.Decide(context.Background(), a.attempt)
				checkOutcome(t, d, stopWith(retry.AttemptsExhausted))
				if d.Attempt != tc.want+1 || d.MaxAttempts != tc.want+1 {
					t.Fatalf("last: Attempt/MaxAttempts = %d/%d, want %d/%d", d.Attempt, d.MaxAttempts, tc.want+1, tc.want+1)
				}
				if call.Retries() != tc.want {
					t.Fatalf("Retries() = %d, want %d", call.Retries(), tc.want)
				}
				// Once exhausted it stays exhausted.
				checkOutcome(t, call.Decide(context.Background(), a.attempt), stopWith(retry.AttemptsExhausted))
			})
		}
	}

	t.Run("zero-value policy makes no retries", func(t *testing.T) {
		var call retry.Call
		d := call.Decide(context.Background(), status(429, "1"))
		checkOutcome(t, d, stopWith(retry.AttemptsExhausted))
		if d.MaxAttempts != 1 {
			t.Fatalf("MaxAttempts = %d, want 1", d.MaxAttempts)
		}
	})

	t.Run("success after retries reports its attempt", func(t *testing.T) {
		p, _ := detPolicy(retry.Standard, 1)
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(502)), retryIt)
		checkOutcome(t, call.Decide(context.Background(), status(504)), retryIt)
		d := call.Decide(context.Background(), status(200))
		checkOutcome(t, d, success)
		if d.Attempt != 3 || d.MaxAttempts != 3 || d.Wait != 0 {
			t.Fatalf("Attempt/MaxAttempts/Wait = %d/%d/%v, want 3/3/0", d.Attempt, d.MaxAttempts, d.Wait)
		}
	})

	t.Run("Reset starts a new call", func(t *testing.T) {
		p, _ := detPolicy(retry.Standard, 1)
		call := p.Start()
		call.Decide(context.Background(), status(503))
		call.Decide(context.Background(), status(503))
		checkOutcome(t, call.Decide(context.Background(), status(503)), stopWith(retry.AttemptsExhausted))
		call.Reset(p)
		if call.Retries() != 0 || call.Spent() != 0 || call.Last() != (retry.Decision{}) {
			t.Fatalf("after Reset: Retries=%d Spent=%v Last=%+v", call.Retries(), call.Spent(), call.Last())
		}
		d := call.Decide(context.Background(), status(503))
		checkOutcome(t, d, retryIt)
		if d.Attempt != 1 {
			t.Fatalf("Attempt = %d after Reset, want 1", d.Attempt)
		}
	})
}

func TestMaxTotalDelay(t *testing.T) {
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
			p, _ := detPolicy(retry.Standard, 1)
			p.MaxRetries = 5
			p.MaxTotalDelay = tc.budget
			call := p.Start()
			var spent time.Duration
			for i := 0; i < tc.retries; i++ {
				d := call.Decide(context.Background(), status(503))
				checkOutcome(t, d, retryIt)
				spent += d.Wait
			}
			if call.Spent() != spent {
				t.Fatalf("Spent = %v, want %v", call.Spent(), spent)
			}
			d := call.Decide(context.Background(), status(503))
			if tc.retries == 5 {
				checkOutcome(t, d, stopWith(retry.AttemptsExhausted))
				return
			}
			checkOutcome(t, d, stopWith(retry.BudgetExhausted))
			if tc.budget > 0 && spent+d.Wait <= tc.budget {
				t.Fatalf("stopped although %v + %v fits the budget %v", spent, d.Wait, tc.budget)
			}
			if call.Spent() != spent || call.Retries() != tc.retries {
				t.Fatalf("a stop changed the call: Spent=%v Retries=%d", call.Spent(), call.Retries())
			}
		})
	}

	t.Run("Retry-After counts against the budget", func(t *testing.T) {
		p, _ := detPolicy(retry.Standard, 1)
		p.MaxTotalDelay = 10 * time.Second
		call := p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(429, "6")), retryIt)
		d := call.Decide(context.Background(), status(429, "5"))
		checkOutcome(t, d, stopWith(retry.BudgetExhausted))
		if d.Wait != 5*time.Second {
			t.Fatalf("Wait = %v, want the 5s that did not fit", d.Wait)
		}
		call = p.Start()
		checkOutcome(t, call.Decide(context.Background(), status(429, "6")), retryIt)
		checkOutcome(t, call.Decide(context.Background(), status(429, "4")), retryIt)
	})
}

func TestDeadline(t *testing.T) {
	cases := []struct {
		name     string
		base     time.Duration
		attempt  retry.Attempt
		left     time.Duration
		want     outcome
		wantWait time.Duration
	}{
		{"backoff fits", time.Second, status(503), 2 * time.Second, retryIt, time.Second},
		{"backoff exactly fits", time.Second, status(503), time.Second, retryIt, time.Second},
		{"backoff does not fit", time.Second, status(503), time.Second - 1, stopWith(retry.BackoffExceedsDeadline), time.Second},
		{"network failure backoff does not fit", time.Second, netFailure(retry.Failure{}), 500 * time.Millisecond, stopWith(retry.BackoffExceedsDeadline), time.Second},
		{"Retry-After fits", time.Second, status(429, "5"), 10 * time.Second, retryIt, 5 * time.Second},
		{"Retry-After exactly fits and is not shortened", time.Second, status(429, "5"), 5 * time.Second, retryIt, 5 * time.Second},
		{"Retry-After does not fit", time.Second, status(429, "5"), 5*time.Second - 1, stopWith(retry.RetryAfterExceedsDeadline), 5 * time.Second},
		{"Retry-After far beyond", time.Second, status(429, "30"), 3 * time.Second, stopWith(retry.RetryAfterExceedsDeadline), 30 * time.Second},
		{"Retry-After fits, backoff does not", 4 * time.Second, status(429, "1"), 2 * time.Second, stopWith(retry.BackoffExceedsDeadline), 4 * time.Second},
		{"Retry-After 0, backoff does not fit", time.Second, status(429, "0"), 0, stopWith(retry.BackoffExceedsDeadline), time.Second},
		{"deadline already passed on the injected clock", time.Second, status(503), -time.Second, stopWith(retry.BackoffExceedsDeadline), time.Second},
		{"not retryable is not a deadline stop", time.Second, status(404), time.Nanosecond, stopWith(retry.NotRetryable), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, now := detPolicy(retry.Standard, 1)
			p.Base = tc.base
			ctx := deadlineCtx(t, now, tc.left)
			d := p.Start().Decide(ctx, tc.attempt)
			checkOutcome(t, d, tc.want)
			if !d.HasDeadline || d.TimeLeft != tc.left {
				t.Errorf("HasDeadline/TimeLeft = %v/%v, want true/%v", d.HasDeadline, d.TimeLeft, tc.left)
			}
			if tc.wantWait != 0 && d.Wait != tc.wantWait {
				t.Errorf("Wait = %v, want the full wait %v (never shortened)", d.Wait, tc.wantWait)
			}
			if d.Retry && d.Wait > d.TimeLeft {
				t.Errorf("retry with Wait %v past the deadline (%v left)", d.Wait, d.TimeLeft)
			}
		})
	}

	t.Run("no deadline", func(t *testing.T) {
		p, _ := detPolicy(retry.Standard, 1)
		d := p.Start().Decide(context.Background(), status(429, "60"))
		checkOutcome(t, d, retryIt)
		if d.HasDeadline || d.TimeLeft != 0 {
			t.Fatalf("HasDeadline/TimeLeft = %v/%v without a deadline", d.HasDeadline, d.TimeLeft)
		}
	})

	t.Run("TimeLeft follows the injected clock", func(t *testing.T) {
		p, now := detPolicy(retry.Standard, 1)
		clock := now
		p.Now = func() time.Time { return clock }
		ctx := deadlineCtx(t, now, 10*time.Second)
		call := p.Start()
		d := call.Decide(ctx, status(503))
		checkOutcome(t, d, retryIt)
		if d.TimeLeft != 10*time.Second {
			t.Fatalf("TimeLeft = %v, want 10s", d.TimeLeft)
		}
		clock = clock.Add(d.Wait + 7500*time.Millisecond) // waited 1s, the attempt took 7.5s
		d = call.Decide(ctx, status(503))
		checkOutcome(t, d, stopWith(retry.BackoffExceedsDeadline)) // the 2s backoff does not fit in 1.5s
		if d.TimeLeft != 1500*time.Millisecond || d.Wait != 2*time.Second {
			t.Fatalf("TimeLeft/Wait = %v/%v, want 1.5s/2s", d.TimeLeft, d.Wait)
		}
	})
}

func TestContextDone(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "expired": expired} {
		for _, class := range []retry.Class{retry.Billed, retry.Standard} {
			for _, a := range []struct {
				name    string
				attempt retry.Attempt
				want    outcome
			}{
				{"503", status(503), stopWith(retry.ContextDone)},
				{"429 Retry-After 1", status(429, "1"), stopWith(retry.ContextDone)},
				{"network failure", netFailure(retry.Failure{NotSent: true, Timeout: true}), stopWith(retry.ContextDone)},
				{"200 still succeeds", status(200), success},
				{"accepted 307 still succeeds", retry.Attempt{Status: 307, Accepted: true}, success},
			} {
				t.Run(name+"/"+class.String()+"/"+a.name, func(t *testing.T) {
					p, _ := detPolicy(class, 1)
					call := p.Start()
					d := call.Decide(ctx, a.attempt)
					checkOutcome(t, d, a.want)
					if call.Retries() != 0 {
						t.Fatalf("Retries = %d", call.Retries())
					}
				})
			}
		}
	}
}

// countingServer starts a loopback server whose handler gets the 1-based
// number of each arrival; the returned counter holds the arrivals.
func countingServer(t *testing.T, h func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(arrivals.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &arrivals
}

// testHTTPClient returns a client with its own transport, whose idle
// connections are closed when the test ends.
func testHTTPClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// fastPolicy is New(c) with millisecond backoffs and the real clock, for
// calls that really wait.
func fastPolicy(c retry.Class) retry.Policy {
	p := retry.New(c)
	p.Base, p.Max = time.Millisecond, 2*time.Millisecond
	return p
}

func doGet(t *testing.T, call *retry.Call, hc *http.Client, ctx context.Context, url string) (*http.Response, string, error) {
	t.Helper()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := call.Client(hc).Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return resp, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, string(body), nil
}

func TestClientStandardRetries5xx(t *testing.T) {
	srv, arrivals := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	call := fastPolicy(retry.Standard).Start()
	resp, body, err := doGet(t, call, testHTTPClient(t), context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || body != "ok" || arrivals.Load() != 3 {
		t.Fatalf("status %d body %q after %d arrivals, want 200 \"ok\" after 3", resp.StatusCode, body, arrivals.Load())
	}
	if call.Retries() != 2 || call.Last().Reason != "" || call.Last().Attempt != 3 {
		t.Fatalf("Retries=%d Last=%+v, want 2 retries and a success on attempt 3", call.Retries(), call.Last())
	}
}

func TestClientGivesUpWithLastResponse(t *testing.T) {
	srv, arrivals := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("busy %d", n), http.StatusBadGateway)
	})
	call := fastPolicy(retry.Standard).Start()
	resp, body, err := doGet(t, call, testHTTPClient(t), context.Background(), srv.URL)
	if err != nil {
		t.Fatalf("err = %v, want the last response and no error", err)
	}
	if resp.StatusCode != 502 || body != "busy 3\n" || arrivals.Load() != 3 {
		t.Fatalf("status %d body %q after %d arrivals, want the third 502 after 3", resp.StatusCode, body, arrivals.Load())
	}
	if call.Last().Reason != retry.AttemptsExhausted {
		t.Fatalf("Last().Reason = %q, want %q", call.Last().Reason, retry.AttemptsExhausted)
	}
}

func TestClientBilledReturns5xx(t *testing.T) {
	for _, code := range []int{500, 502, 503, 504} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			srv, arrivals := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				http.Error(w, "busy", code)
			})
			call := fastPolicy(retry.Billed).Start()
			resp, body, err := doGet(t, call, testHTTPClient(t), context.Background(), srv.URL)
			if err != nil {
				t.Fatalf("err = %v, want the %d response", err, code)
			}
			if resp.StatusCode != code || body != "busy\n" || arrivals.Load() != 1 {
				t.Fatalf("status %d body %q after %d arrivals, want %d \"busy\" after 1", resp.StatusCode, body, arrivals.Load(), code)
			}
			if call.Last().Reason != retry.MayHaveBeenProcessed {
				t.Fatalf("Last().Reason = %q", call.Last().Reason)
			}
		})
	}
}

func TestClient429(t *testing.T) {
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
			srv, arrivals := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					if tc.retryAfter != "" {
						w.Header().Set("Retry-After", tc.retryAfter)
					}
					http.Error(w, "slow down", http.StatusTooManyRequests)
					return
				}
				io.WriteString(w, "ok")
			})
			call := fastPolicy(tc.class).Start()
			resp, _, err := doGet(t, call, testHTTPClient(t), context.Background(), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || arrivals.Load() != tc.arrivals {
				t.Fatalf("status %d after %d arrivals, want %d after %d", resp.StatusCode, arrivals.Load(), tc.status, tc.arrivals)
			}
			if call.Last().Reason != tc.reason {
				t.Fatalf("Last().Reason = %q, want %q", call.Last().Reason, tc.reason)
			}
		})
	}
}

// TestClientDeadline: a context deadline shorter than the backoff stops
// the call at once with the last response, instead of a shortened wait.
func TestClientDeadline(t *testing.T) {
	srv, arrivals := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	p := retry.New(retry.Standard)
	p.Base, p.Max = 10*time.Second, 10*time.Second // a 7.5 s to 10 s backoff
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	call := p.Start()
	resp, _, err := doGet(t, call, testHTTPClient(t), ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || arrivals.Load() != 1 {
		t.Fatalf("status %d after %d arrivals, want 503 after 1", resp.StatusCode, arrivals.Load())
	}
	if d := call.Last(); d.Reason != retry.BackoffExceedsDeadline || !d.HasDeadline || d.Wait < 7500*time.Millisecond {
		t.Fatalf("Last() = %+v, want a backoff_exceeds_deadline stop with the full wait", d)
	}
}

func TestClientNetworkFailure(t *testing.T) {
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
			srv, arrivals := countingServer(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close() // the request was read: the outcome is unknown
				}
			})
			call := fastPolicy(tc.class).Start()
			resp, _, err := doGet(t, call, testHTTPClient(t), context.Background(), srv.URL)
			if err == nil || resp != nil {
				t.Fatalf("resp %v, err %v; want the transport error", resp, err)
			}
			if arrivals.Load() != tc.arrivals || call.Last().Reason != tc.reason {
				t.Fatalf("%d arrivals, reason %q; want %d, %q", arrivals.Load(), call.Last().Reason, tc.arrivals, tc.reason)
			}
		})
	}
}

// cookieless is a CookieJar that keeps nothing, to tell a client's jar.
type cookieless struct{}

func (*cookieless) SetCookies(*url.URL, []*http.Cookie) {}
func (*cookieless) Cookies(*url.URL) []*http.Cookie     { return nil }

func TestClientAdapter(t *testing.T) {
	jar := &cookieless{}
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	p, _ := detPolicy(retry.Standard, 1)
	p.MaxRetries = 100
	call := p.Start()
	rc := call.Client(hc)
	if h := rc.HTTPClient; h == hc || h.Jar != jar || h.Timeout != time.Minute || h.Transport == nil {
		t.Fatalf("Client's http.Client = %+v, want a copy of hc with a NoReplay transport", h)
	}
	if hc.Transport != nil {
		t.Fatalf("hc was modified: Transport %v", hc.Transport)
	}
	if rc.RetryMax != 16 || rc.Logger != nil || rc.CheckRetry == nil || rc.Backoff == nil || rc.ErrorHandler == nil {
		t.Fatalf("Client = %+v, want RetryMax 16, no logger, the call's hooks", rc)
	}

	resp := &http.Response{StatusCode: 429, Header: http.Header{
		"Retry-After": {"Sun, 06 Nov 1994 08:49:44 GMT"},
		"Date":        {"Sun, 06 Nov 1994 08:49:37 GMT"},
	}}
	a := retry.AttemptOf(resp, nil)
	if a.Status != 429 || len(a.RetryAfter) != 1 || a.Date != "Sun, 06 Nov 1994 08:49:37 GMT" || a.Err != nil {
		t.Fatalf("AttemptOf = %+v", a)
	}
	ok, err := call.CheckRetry(context.Background(), resp, nil)
	if !ok || err != nil {
		t.Fatalf("CheckRetry(429 with Retry-After) = %v, %v; want true, nil", ok, err)
	}
	if call.Last().Wait != 7*time.Second {
		t.Fatalf("Wait = %v, want the 7s Retry-After measured against Date", call.Last().Wait)
	}
	// Backoff returns the decided wait whatever go-retryablehttp passes.
	if got := call.Backoff(time.Hour, 2*time.Hour, 9, nil); got != 7*time.Second {
		t.Fatalf("Backoff = %v, want 7s", got)
	}
	ok, err = call.CheckRetry(context.Background(), nil, &net.OpError{Op: "dial", Err: errors.New("refused")})
	if !ok || err != nil || call.Backoff(0, 0, 0, nil) != 2*time.Second {
		t.Fatalf("CheckRetry(dial error) = %v, %v, wait %v; want true, nil, 2s", ok, err, call.Backoff(0, 0, 0, nil))
	}
	ok, err = call.CheckRetry(context.Background(), &http.Response{StatusCode: 404, Header: http.Header{}}, nil)
	if ok || err != nil || call.Last().Reason != retry.NotRetryable {
		t.Fatalf("CheckRetry(404) = %v, %v, reason %q; want false, nil, not_retryable", ok, err, call.Last().Reason)
	}
	billed, _ := detPolicy(retry.Billed, 1)
	ok, err = billed.Start().CheckRetry(context.Background(), nil, &url.Error{Op: "Get", URL: "x", Err: io.EOF})
	if ok || err != nil {
		t.Fatalf("billed CheckRetry(EOF) = %v, %v; want false, nil", ok, err)
	}
}
