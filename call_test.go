package synthient_test

// Tests of the call loop: an operation's attempts and the decision after
// each (call.go). In order:
//
//   - the retry rules (the rule table of docs/retries.md) for every
//     operation of the billed and standard classes, on an httpmock
//     transport inside synctest bubbles: time is fake there, so a test
//     waits out a 60 s Retry-After at once and asserts the exact fake time
//     it took;
//   - the attempt log: one event per decision, its level and fields, and
//     nothing of the address, the domain, the query or the key;
//   - the loop against real loopback servers (apiServer, rawServer):
//     replays, connections closed or refused, malformed answers, the idle
//     pool, error bodies, request headers, redirects, the response hook, a
//     Retry-After against the caller's context;
//   - every response body closed, on every way a call ends;
//   - the client-wide retry quota.
//
// The connection's own rules (timeouts, TLS) are tested in
// transport_test.go.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// ---- The retry rules ----

// retryAfterDate answers 429 with a Retry-After HTTP-date after past the
// answer's Date, which is the (fake) current time shifted by skew and is
// sent only if withDate. A responder func: the dates are those of the
// moment of the answer.
func retryAfterDate(after, skew time.Duration, withDate bool) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		date := time.Now().UTC().Add(skew)
		h := http.Header{"Retry-After": {date.Add(after).Format(http.TimeFormat)}}
		if withDate {
			h.Set("Date", date.Format(http.TimeFormat))
		}
		return answer(http.StatusTooManyRequests, `{"status":429}`).HeaderSet(h)(req)
	}
}

// hangUntilDone answers only when the request's context ends, with its
// error.
func hangUntilDone(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
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
	script   []httpmock.Responder
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
	type script = []httpmock.Responder
	var (
		reset   = httpmock.NewErrorResponder(errors.New("read tcp: connection reset by peer"))
		refused = httpmock.NewErrorResponder(dialRefused())
	)
	ok2 := outcome{2, ""}
	cases := []ruleCase{
		{
			name:     "429_retry_after_0_is_retried",
			script:   script{problem(429, retryAfter429, "0"), opSucceeds},
			billed:   ok2,
			standard: ok2,
		},
		{
			name:     "429_without_retry_after",
			script:   script{problem(429), opSucceeds},
			billed:   outcome{once, rateLimited},
			standard: outcome{once, rateLimited},
			status:   429,
		},
		{
			name:       "429_retry_after_61_with_max_retries_5",
			script:     script{problem(429, retryAfter429, "61"), opSucceeds},
			opts:       []synthient.Option{synthient.WithMaxRetries(5)},
			billed:     outcome{once, exceedsMax},
			standard:   outcome{once, exceedsMax},
			status:     429,
			retryAfter: ptr(61 * time.Second),
		},
		{
			name:               "429_retry_after_too_large_for_a_duration",
			script:             script{problem(429, retryAfter429, "99999999999999999999999"), opSucceeds},
			opts:               []synthient.Option{synthient.WithMaxRetries(5)},
			billed:             outcome{once, exceedsMax},
			standard:           outcome{once, exceedsMax},
			status:             429,
			anyRetryAfterAbove: time.Hour,
		},
		{
			name:     "429_retry_after_60_is_waited",
			script:   script{problem(429, retryAfter429, "60"), opSucceeds},
			billed:   ok2,
			standard: ok2,
			elapsed:  60 * time.Second,
		},
		{
			name:     "429_retry_after_http_date_is_waited",
			script:   script{retryAfterDate(7*time.Second, 0, true), opSucceeds},
			billed:   ok2,
			standard: ok2,
			elapsed:  7 * time.Second,
		},
		{
			// The wait is measured against the response's Date, not the
			// local clock: a server clock an hour behind still means 7 s.
			name:     "429_retry_after_http_date_against_a_skewed_date_header",
			script:   script{retryAfterDate(7*time.Second, -time.Hour, true), opSucceeds},
			billed:   ok2,
			standard: ok2,
			elapsed:  7 * time.Second,
		},
		{
			name:     "429_retry_after_http_date_without_date_header",
			script:   script{retryAfterDate(5*time.Second, 0, false), opSucceeds},
			billed:   ok2,
			standard: ok2,
			elapsed:  5 * time.Second,
		},
		{
			name:       "429_retry_after_past_http_date_means_0",
			script:     script{retryAfterDate(-time.Hour, 0, true)},
			opts:       []synthient.Option{synthient.WithMaxRetries(0)},
			billed:     outcome{once, exhausted},
			standard:   outcome{once, exhausted},
			status:     429,
			retryAfter: ptr(time.Duration(0)),
		},
		{
			name:       "429_retry_after_11_over_max_retry_after_10s",
			script:     script{problem(429, retryAfter429, "11"), opSucceeds},
			opts:       []synthient.Option{synthient.WithMaxRetryAfter(10 * time.Second)},
			billed:     outcome{once, exceedsMax},
			standard:   outcome{once, exceedsMax},
			status:     429,
			retryAfter: ptr(11 * time.Second),
		},
		{
			name:     "429_retry_after_10_at_max_retry_after_10s",
			script:   script{problem(429, retryAfter429, "10"), opSucceeds},
			opts:     []synthient.Option{synthient.WithMaxRetryAfter(10 * time.Second)},
			billed:   ok2,
			standard: ok2,
			elapsed:  10 * time.Second,
		},
		{
			name:       "429_default_max_retries",
			script:     script{problem(429, retryAfter429, "0")},
			billed:     outcome{defaultTries, exhausted},
			standard:   outcome{defaultTries, exhausted},
			status:     429,
			retryAfter: ptr(time.Duration(0)),
		},
		{
			name:       "429_max_retries_0",
			script:     script{problem(429, retryAfter429, "0")},
			opts:       []synthient.Option{synthient.WithMaxRetries(0)},
			billed:     outcome{once, exhausted},
			standard:   outcome{once, exhausted},
			status:     429,
			retryAfter: ptr(time.Duration(0)),
		},
		{
			name:       "429_max_retries_3",
			script:     script{problem(429, retryAfter429, "0")},
			opts:       []synthient.Option{synthient.WithMaxRetries(3)},
			billed:     outcome{4, exhausted},
			standard:   outcome{4, exhausted},
			status:     429,
			retryAfter: ptr(time.Duration(0)),
		},
		{
			name:       "429_max_retries_100_is_capped_at_16",
			script:     script{problem(429, retryAfter429, "0")},
			opts:       []synthient.Option{synthient.WithMaxRetries(100)},
			billed:     outcome{capTries, exhausted},
			standard:   outcome{capTries, exhausted},
			status:     429,
			retryAfter: ptr(time.Duration(0)),
		},
		{
			name:     "503_max_retries_0",
			script:   script{problem(503), opSucceeds},
			opts:     []synthient.Option{synthient.WithMaxRetries(0)},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{once, exhausted},
			status:   503,
		},
		{
			name:     "503_then_200",
			script:   script{problem(503), opSucceeds},
			billed:   outcome{once, mayHaveBeen},
			standard: ok2,
			status:   503,
		},
		{
			name:     "503_retry_after_3_is_waited_by_standard",
			script:   script{problem(503, retryAfter429, "3"), opSucceeds},
			billed:   outcome{once, mayHaveBeen},
			standard: ok2,
			status:   503,
			// billed: the response said 3 s, which the error keeps.
			retryAfter: ptr(3 * time.Second),
			elapsed:    3 * time.Second,
		},
		{
			name:       "503_retry_after_61",
			script:     script{problem(503, retryAfter429, "61"), opSucceeds},
			billed:     outcome{once, mayHaveBeen},
			standard:   outcome{once, exceedsMax},
			status:     503,
			retryAfter: ptr(61 * time.Second),
		},
		{
			name:     "network_error",
			script:   script{reset, opSucceeds},
			opts:     []synthient.Option{synthient.WithMaxRetries(2)},
			billed:   outcome{once, mayHaveBeen},
			standard: ok2,
		},
		{
			name:     "network_error_every_time",
			script:   script{reset},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{defaultTries, exhausted},
		},
		{
			name:     "timeout_every_time",
			script:   script{httpmock.NewErrorResponder(timeoutError{})},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{defaultTries, exhausted},
			timeout:  true,
		},
		{
			name:     "dial_error_every_time",
			script:   script{refused},
			billed:   outcome{once, notRetryable},
			standard: outcome{defaultTries, exhausted},
			notSent:  true,
		},
		{
			name:     "dial_error_then_200",
			script:   script{refused, opSucceeds},
			billed:   outcome{once, notRetryable},
			standard: ok2,
			notSent:  true,
		},
		{
			name:     "dns_error_every_time",
			script:   script{httpmock.NewErrorResponder(&net.DNSError{Err: "no such host", Name: "api.test", IsNotFound: true})},
			billed:   outcome{once, notRetryable},
			standard: outcome{defaultTries, exhausted},
			notSent:  true,
		},
		{
			name:     "tls_certificate_error_is_never_retried",
			script:   script{httpmock.NewErrorResponder(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), opSucceeds},
			billed:   outcome{once, notRetryable},
			standard: outcome{once, notRetryable},
			notSent:  true,
		},
		{
			// An alert can come after the request was written: for a
			// billed call the outcome is unknown.
			name:     "tls_alert_is_never_retried",
			script:   script{httpmock.NewErrorResponder(tls.AlertError(40)), opSucceeds},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{once, notRetryable},
		},
	}
	for _, v := range []string{"1.5", "-1", "+1", "soon", "", "1, 2", "Sun, 06 Nov 1994 08:49:37 PST"} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("429_unusable_retry_after_%q", v),
			script:   script{problem(429, retryAfter429, v), opSucceeds},
			opts:     []synthient.Option{synthient.WithMaxRetries(5)},
			billed:   outcome{once, rateLimited},
			standard: outcome{once, rateLimited},
			status:   429,
		})
	}
	cases = append(cases, ruleCase{
		name:     "429_two_retry_after_values",
		script:   script{problem(429, retryAfter429, "1", retryAfter429, "2"), opSucceeds},
		opts:     []synthient.Option{synthient.WithMaxRetries(5)},
		billed:   outcome{once, rateLimited},
		standard: outcome{once, rateLimited},
		status:   429,
	})
	for _, code := range []int{500, 502, 503, 504} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("%d_every_time", code),
			script:   script{problem(code)},
			billed:   outcome{once, mayHaveBeen},
			standard: outcome{defaultTries, exhausted},
			status:   code,
		})
	}
	for _, code := range []int{501, 505, 599, 408, 400, 401, 402, 403, 404, 409, 422} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("%d_is_not_retried", code),
			script:   script{problem(code), opSucceeds},
			billed:   outcome{once, notRetryable},
			standard: outcome{once, notRetryable},
			status:   code,
		})
	}
	for _, code := range []int{301, 302, 303, 307, 308} {
		cases = append(cases, ruleCase{
			name:     fmt.Sprintf("%d_is_neither_followed_nor_retried", code),
			script:   script{answer(code, "", "Location", mockBase+"/elsewhere"), opSucceeds},
			billed:   outcome{once, notRetryable},
			standard: outcome{once, notRetryable},
			status:   code,
		})
	}
	return cases
}

// TestRetryRules runs every rule of the rule table on every operation of
// the billed and standard classes and checks the number of requests that
// reached the API, the stop reason, the typed error and the fake time the
// call took.
func TestRetryRules(t *testing.T) {
	t.Parallel()
	for _, op := range operations() {
		for _, rc := range ruleCases() {
			t.Run(op.name+"/"+rc.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					m := newOpMock(t, op, rc.script...)
					c := m.Client(t, rc.opts...)
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
	assert.Equal(t, want.arrivals, m.GetTotalCallCount(), "requests that reached the API (err: %v)", err)
	assertSameRequests(t, op, m)
	if want.reason == "" {
		require.NoError(t, err)
		if want.arrivals > 1 {
			assert.GreaterOrEqual(t, elapsed, rc.elapsed, "fake time the call took")
		}
		if rc.elapsed > 0 {
			assert.Less(t, elapsed, rc.elapsed+time.Second, "fake time the call took, want about %v", rc.elapsed)
		}
		return
	}
	require.Error(t, err, "want a failure with stop reason %q", want.reason)
	base := requireStop(t, err, want.arrivals, want.reason)
	assert.Equal(t, op.name, base.Op, "Error.Op")
	if want.arrivals == 1 {
		assert.Zero(t, elapsed, "fake time before the call returned, want none")
	}
	if rc.status == 0 {
		_ = requireConnErr(t, err, rc.notSent, rc.timeout)
		return
	}
	ae := requireAPIErr(t, err, rc.status)
	if rc.anyRetryAfterAbove > 0 {
		require.NotNil(t, ae.RetryAfter, "APIError.RetryAfter")
		assert.Greater(t, *ae.RetryAfter, rc.anyRetryAfterAbove, "APIError.RetryAfter")
		return
	}
	assert.Equal(t, rc.retryAfter, ae.RetryAfter, "APIError.RetryAfter")
}

// assertSameRequests checks that every request of a call, retries
// included, is the same: method, path, body, and the key (none for
// Health).
func assertSameRequests(t *testing.T, op opCase, m *mockAPI) {
	t.Helper()
	wantBody := ""
	if op.method == http.MethodPost {
		wantBody = `{"ips":["1.2.3.4"]}`
	}
	for i, r := range m.Requests() {
		assert.Equal(t, op.method+" "+op.path, r.Method+" "+r.URL.Path, "request %d", i+1)
		assert.Equal(t, wantBody, r.Body, "request %d: body", i+1)
		if op.name == "Health" {
			assert.NotContains(t, r.Header, "X-Api-Key", "request %d: X-Api-Key sent to /health", i+1)
		} else {
			assert.Equal(t, []string{testKey}, r.Header.Values("X-Api-Key"), "request %d: X-Api-Key", i+1)
		}
	}
}

// TestWaitIsTheLongerOfBackoffAndRetryAfter checks wait = max(backoff,
// Retry-After) for a class of each kind.
func TestWaitIsTheLongerOfBackoffAndRetryAfter(t *testing.T) {
	t.Parallel()
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
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					m := newOpMock(t, op, problem(429, "Retry-After", tc.retryAfter), opSucceeds)
					c := m.Client(t, synthient.WithBackoff(10*time.Second, 30*time.Second), randOne)
					require.NoError(t, op.call(context.Background(), c))
					assert.Equal(t, []time.Duration{tc.want}, m.Gaps(), "waits")
				})
			})
		}
	}
}

// TestBackoffSchedule checks b(k) = min(base*2^k, max) and the jitter
// range [0.75*b(k), b(k)], on 503s (Account) and on 429s with Retry-After: 0
// (LookupIP).
func TestBackoffSchedule(t *testing.T) {
	t.Parallel()
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
	failures := map[string]httpmock.Responder{
		"Account":  problem(503),
		"LookupIP": problem(429, "Retry-After", "0"),
	}
	for _, name := range []string{"Account", "LookupIP"} {
		op := opNamed(name)
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					n := len(tc.want)
					m := newOpMock(t, op, append(slices.Repeat([]httpmock.Responder{failures[name]}, n), opSucceeds)...)
					c := m.Client(t, append([]synthient.Option{synthient.WithMaxRetries(n)}, tc.opts...)...)
					require.NoError(t, op.call(context.Background(), c))
					assert.Equal(t, tc.want, m.Gaps(), "waits")
				})
			})
		}
	}
	// With the default randomness every wait lies in [0.75*b(k), b(k)].
	t.Run("Account/default_random_in_range", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			op := opNamed("Account")
			m := newOpMock(t, op, append(slices.Repeat([]httpmock.Responder{problem(503)}, 6), opSucceeds)...)
			c := m.Client(t, synthient.WithMaxRetries(6), synthient.WithBackoff(s, 30*s))
			require.NoError(t, op.call(context.Background(), c))
			ceilings := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s}
			got := m.Gaps()
			require.Len(t, got, len(ceilings), "waits %v", got)
			for k, b := range ceilings {
				assert.GreaterOrEqual(t, got[k], b*3/4, "wait %d", k)
				assert.LessOrEqual(t, got[k], b, "wait %d", k)
			}
		})
	})
}

// TestRetryBudget checks that retrying stops with budget_exhausted when the
// next wait would make the call's waits add up to more than the budget.
func TestRetryBudget(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name     string
		op       string
		script   []httpmock.Responder
		opts     []synthient.Option
		arrivals int
		elapsed  time.Duration
		reason   synthient.StopReason // empty: success
		status   int                  // the last answer's status, on a failure
	}{
		{"Account/budget_2.5s", "Account", []httpmock.Responder{problem(503)},
			[]synthient.Option{synthient.WithMaxRetries(5), synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(2500 * time.Millisecond)},
			2, s, retry.BudgetExhausted, 503},
		{"Account/budget_3s_exactly_fits_two_waits", "Account", []httpmock.Responder{problem(503)},
			[]synthient.Option{synthient.WithMaxRetries(5), synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(3 * s)},
			3, 3 * s, retry.BudgetExhausted, 503},
		{"Account/budget_500ms_below_the_first_wait", "Account", []httpmock.Responder{problem(503), opSucceeds},
			[]synthient.Option{synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(500 * time.Millisecond)},
			1, 0, retry.BudgetExhausted, 503},
		{"Account/budget_large_enough", "Account", []httpmock.Responder{problem(503), problem(503), opSucceeds},
			[]synthient.Option{synthient.WithBackoff(s, 30*s), randOne, synthient.WithRetryBudget(10 * s)},
			3, 3 * s, "", 0},
		{"LookupIP/retry_after_counts_against_the_budget", "LookupIP", []httpmock.Responder{problem(429, "Retry-After", "2")},
			[]synthient.Option{synthient.WithMaxRetries(5), synthient.WithRetryBudget(3 * s)},
			2, 2 * s, retry.BudgetExhausted, 429},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newOpMock(t, op, tc.script...)
				c := m.Client(t, tc.opts...)
				start := time.Now()
				err := op.call(context.Background(), c)
				assert.Equal(t, tc.elapsed, time.Since(start), "fake time the call took")
				assert.Equal(t, tc.arrivals, m.GetTotalCallCount(), "requests")
				if tc.reason == "" {
					require.NoError(t, err)
					return
				}
				_ = requireStop(t, err, tc.arrivals, tc.reason)
				_ = requireAPIErr(t, err, tc.status)
			})
		})
	}
}

// TestDeadlineStopsBeforeAWaitThatWouldPassIt checks that the client looks
// at the caller's deadline before each wait: a wait that would pass it
// stops the call at once with the last error; one that fits is waited out
// in full.
func TestDeadlineStopsBeforeAWaitThatWouldPassIt(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name       string
		op         string
		script     []httpmock.Responder
		opts       []synthient.Option
		reason     synthient.StopReason // empty: success
		status     int
		retryAfter *time.Duration
		elapsed    time.Duration
	}{
		{"LookupIP/retry_after_10_deadline_5s", "LookupIP", []httpmock.Responder{problem(429, "Retry-After", "10"), opSucceeds}, nil,
			retry.RetryAfterExceedsDeadline, 429, ptr(10 * s), 0},
		{"Account/retry_after_10_deadline_5s", "Account", []httpmock.Responder{problem(429, "Retry-After", "10"), opSucceeds}, nil,
			retry.RetryAfterExceedsDeadline, 429, ptr(10 * s), 0},
		{"Health/retry_after_10_deadline_5s", "Health", []httpmock.Responder{problem(429, "Retry-After", "10"), opSucceeds}, nil,
			retry.RetryAfterExceedsDeadline, 429, ptr(10 * s), 0},
		{"Account/503_backoff_10s_deadline_5s", "Account", []httpmock.Responder{problem(503), opSucceeds},
			[]synthient.Option{synthient.WithBackoff(10*s, 30*s), randOne},
			retry.BackoffExceedsDeadline, 503, nil, 0},
		{"LookupIP/retry_after_4_fits_deadline_5s", "LookupIP", []httpmock.Responder{problem(429, "Retry-After", "4"), opSucceeds}, nil,
			"", 0, nil, 4 * s},
		{"Account/retry_after_4_fits_deadline_5s", "Account", []httpmock.Responder{problem(429, "Retry-After", "4"), opSucceeds}, nil,
			"", 0, nil, 4 * s},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newOpMock(t, op, tc.script...)
				c := m.Client(t, tc.opts...)
				ctx, cancel := context.WithTimeout(context.Background(), 5*s)
				defer cancel()
				start := time.Now()
				err := op.call(ctx, c)
				assert.Equal(t, tc.elapsed, time.Since(start), "fake time the call took")
				if tc.reason == "" {
					require.NoError(t, err)
					assert.Equal(t, 2, m.GetTotalCallCount(), "requests")
					return
				}
				assert.Equal(t, 1, m.GetTotalCallCount(), "requests")
				_ = requireStop(t, err, 1, tc.reason)
				ae := requireAPIErr(t, err, tc.status)
				if tc.retryAfter != nil {
					assert.Equal(t, tc.retryAfter, ae.RetryAfter, "APIError.RetryAfter")
				}
			})
		})
	}
}

// TestCancelDuringAWait checks that cancelling the context ends a wait at
// once, and that the error matches context.Canceled and still carries the
// last attempt's typed error.
func TestCancelDuringAWait(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name   string
		op     string
		script []httpmock.Responder
		opts   []synthient.Option
		status int // 0: the last error is a *ConnectionError
	}{
		{"LookupIP/429_retry_after_30", "LookupIP", []httpmock.Responder{problem(429, "Retry-After", "30"), opSucceeds}, nil, 429},
		{"LookupIPs/429_retry_after_30", "LookupIPs", []httpmock.Responder{problem(429, "Retry-After", "30"), opSucceeds}, nil, 429},
		{"Account/429_retry_after_30", "Account", []httpmock.Responder{problem(429, "Retry-After", "30"), opSucceeds}, nil, 429},
		{"Account/503_backoff_30s", "Account", []httpmock.Responder{problem(503), opSucceeds},
			[]synthient.Option{synthient.WithBackoff(30*s, 30*s)}, 503},
		{"Account/network_error_backoff_30s", "Account",
			[]httpmock.Responder{httpmock.NewErrorResponder(errors.New("connection reset")), opSucceeds},
			[]synthient.Option{synthient.WithBackoff(30*s, 30*s)}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newOpMock(t, op, tc.script...)
				c := m.Client(t, tc.opts...)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() {
					time.Sleep(5 * s)
					cancel()
				}()
				start := time.Now()
				err := op.call(ctx, c)
				elapsed := time.Since(start)
				requireContextErr(t, err, context.Canceled, tc.status)
				assert.Equal(t, 5*s, elapsed, "fake time before the call returned: the moment of the cancel")
				assert.Equal(t, 1, m.GetTotalCallCount(), "requests")
				base := requireStop(t, err, 1, retry.ContextDone)
				assert.Equal(t, op.name, base.Op, "Error.Op")
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
	t.Parallel()
	for _, name := range []string{"LookupIP", "Account"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(name)
				m := newOpMock(t, op, problem(429, "Retry-After", "30"), opSucceeds)
				c := m.Client(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				start := time.Now()
				err := op.call(hiddenDeadline{ctx}, c)
				elapsed := time.Since(start)
				requireContextErr(t, err, context.DeadlineExceeded, 429)
				assert.Equal(t, 5*time.Second, elapsed, "fake time before the call returned")
				assert.Equal(t, 1, m.GetTotalCallCount(), "requests")
			})
		})
	}
}

// requireContextErr checks that err matches ctxErr and still carries the
// last attempt's typed error: an *APIError with status, or a
// *ConnectionError when status is 0.
func requireContextErr(t *testing.T, err, ctxErr error, status int) {
	t.Helper()
	require.ErrorIs(t, err, ctxErr)
	if status == 0 {
		var ce *synthient.ConnectionError
		assert.ErrorAs(t, err, &ce, "the last error is lost")
		return
	}
	_ = requireAPIErr(t, err, status)
}

// TestContextEndsDuringARequest checks a deadline that passes while a
// request waits for its response, on the first attempt and on a retry.
func TestContextEndsDuringARequest(t *testing.T) {
	t.Parallel()
	for _, op := range operations() {
		t.Run(op.name+"/first_attempt", func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := newOpMock(t, op, hangUntilDone)
				c := m.Client(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				start := time.Now()
				err := op.call(ctx, c)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, 5*time.Second, time.Since(start), "fake time before the call returned")
				_ = requireStop(t, err, 1, retry.ContextDone)
				assert.Equal(t, 1, m.GetTotalCallCount(), "requests")
			})
		})
		t.Run(op.name+"/retry", func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := newOpMock(t, op, problem(429, "Retry-After", "1"), hangUntilDone)
				c := m.Client(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err := op.call(ctx, c)
				requireContextErr(t, err, context.DeadlineExceeded, 429)
				_ = requireStop(t, err, 2, retry.ContextDone)
				assert.Equal(t, 2, m.GetTotalCallCount(), "requests")
			})
		})
	}
}

// TestCancelledContextSendsNothing checks that a call with a context that
// is already done sends no request.
func TestCancelledContextSendsNothing(t *testing.T) {
	t.Parallel()
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			m := newOpMock(t, op)
			c := m.Client(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := op.call(ctx, c)
			require.ErrorIs(t, err, context.Canceled)
			assert.Zero(t, m.GetTotalCallCount(), "requests sent")
		})
	}
}

// ---- The attempt log ----

// logEvent is one decoded JSON log line.
type logEvent map[string]any

// parseLog decodes every line of a JSON log.
func parseLog(t testing.TB, out string) []logEvent {
	t.Helper()
	var events []logEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e logEvent
		require.NoError(t, json.Unmarshal([]byte(line), &e), "log line %q", line)
		events = append(events, e)
	}
	return events
}

// assertLogFields checks the members of event i given in want; a nil
// value wants the member absent.
func assertLogFields(t testing.TB, i int, e logEvent, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := e[k]
		if v == nil {
			assert.False(t, ok, "event %d: %s = %v, want it absent", i, k, got)
			continue
		}
		if assert.True(t, ok, "event %d: no %s (want %v) in %v", i, k, v, e) {
			assert.Equal(t, fmt.Sprint(v), fmt.Sprint(got), "event %d: %s", i, k)
		}
	}
}

func TestLoggerRetriesThenSuccess(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		m := newOpMock(t, opNamed("Account"), problem(503, "X-Request-Id", "req-1"), problem(503), opSucceeds)
		_, err := m.Client(t, synthient.WithLogger(logger)).Account(context.Background())
		require.NoError(t, err, "Account")
		events := parseLog(t, logs.String())
		require.Len(t, events, 3, "events:\n%s", logs)
		common := map[string]any{"method": "GET", "route": "/account/me", "class": "standard", "max_attempts": 3,
			"reason": nil, "retry_after": nil}
		for i, e := range events {
			assertLogFields(t, i, e, common)
			assertLogFields(t, i, e, map[string]any{"attempt": i + 1})
		}
		for i := range 2 {
			assertLogFields(t, i, events[i], map[string]any{"level": "DEBUG", "decision": "retry", "status": 503})
			if assert.IsType(t, float64(0), events[i]["wait"], "event %d: wait", i) {
				assert.Positive(t, events[i]["wait"].(float64), "event %d: wait", i)
			}
		}
		assertLogFields(t, 0, events[0], map[string]any{"request_id": "req-1"})
		assertLogFields(t, 2, events[2], map[string]any{"level": "DEBUG", "decision": "done", "status": 200, "wait": nil})
	})
}

func TestLoggerStopAtInfo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		op     string
		script []httpmock.Responder
		want   []map[string]any
	}{
		{"billed_503", "LookupIP", []httpmock.Responder{problem(503)}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "may_have_been_processed", "status": 503,
				"method": "GET", "route": "/lookup/ip/{ip}", "class": "billed", "attempt": 1, "max_attempts": 3},
		}},
		{"standard_503_exhausted", "Account", []httpmock.Responder{problem(503)}, []map[string]any{
			{"level": "DEBUG", "decision": "retry", "attempt": 1},
			{"level": "DEBUG", "decision": "retry", "attempt": 2},
			{"level": "INFO", "decision": "stop", "reason": "attempts_exhausted", "status": 503, "attempt": 3, "max_attempts": 3},
		}},
		{"429_without_retry_after", "LookupIPs", []httpmock.Responder{problem(429)}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "rate_limited_without_retry_after", "status": 429,
				"method": "POST", "route": "/lookup/ips", "retry_after": nil},
		}},
		{"429_retry_after_61", "Health", []httpmock.Responder{problem(429, "Retry-After", "61")}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "retry_after_exceeds_max", "status": 429,
				"route": "/health", "class": "billed", "retry_after": float64(61 * time.Second)},
		}},
		{"429_retry_after_1_then_200", "LookupDomain", []httpmock.Responder{problem(429, "Retry-After", "1"), opSucceeds}, []map[string]any{
			{"level": "DEBUG", "decision": "retry", "status": 429, "route": "/lookup/domain/{domain}",
				"retry_after": float64(time.Second), "wait": float64(time.Second)},
			{"level": "DEBUG", "decision": "done", "status": 200, "retry_after": nil, "reason": nil},
		}},
		{"dial_error", "LookupIP", []httpmock.Responder{httpmock.NewErrorResponder(dialRefused())}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "not_retryable", "status": nil, "error": "dial"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				logger, logs := newLogger()
				op := opNamed(tc.op)
				m := newOpMock(t, op, tc.script...)
				_ = op.call(context.Background(), m.Client(t, synthient.WithLogger(logger)))
				events := parseLog(t, logs.String())
				require.Len(t, events, len(tc.want), "events:\n%s", logs)
				for i, w := range tc.want {
					assertLogFields(t, i, events[i], w)
				}
			})
		})
	}
}

// TestLoggerTimeLeft: with a deadline, each decision logs the time left
// before it; without one, none.
func TestLoggerTimeLeft(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		m := newOpMock(t, opNamed("Account"), problem(503), opSucceeds)
		c := m.Client(t, synthient.WithLogger(logger))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Account(ctx)
		require.NoError(t, err, "Account with a deadline")
		_, err = c.Account(context.Background())
		require.NoError(t, err, "Account without a deadline")
		events := parseLog(t, logs.String())
		require.Len(t, events, 3, "events:\n%s", logs)
		for i, e := range events[:2] {
			if assert.IsType(t, float64(0), e["time_left"], "event %d: time_left", i) {
				left := e["time_left"].(float64)
				assert.Positive(t, left, "event %d: time_left", i)
				assert.LessOrEqual(t, left, float64(10*time.Second), "event %d: time_left", i)
			}
		}
		assertLogFields(t, 2, events[2], map[string]any{"decision": "done", "time_left": nil})
	})
}

// TestLoggerHoldsNoAddressKeyOrQuery checks that the route is logged as a
// template, and that neither the address, the domain, the query nor the key
// appears.
func TestLoggerHoldsNoAddressKeyOrQuery(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		lookup := opCase{method: http.MethodGet, path: "/api/v4/lookup/ip/198.51.100.23", success: `{"ip":"198.51.100.23"}`}
		m := newOpMock(t, lookup, problem(429, "Retry-After", "0"), opSucceeds)
		_, err := m.Client(t, synthient.WithLogger(logger)).LookupIP(context.Background(), netip.MustParseAddr("198.51.100.23"))
		require.NoError(t, err, "LookupIP")
		domain := opCase{method: http.MethodGet, path: "/api/v4/lookup/domain/secret-target.example", success: `{"domain":"secret-target.example"}`}
		m2 := newOpMock(t, domain, problem(429, "Retry-After", "0"), opSucceeds)
		_, err = m2.Client(t, synthient.WithLogger(logger)).LookupDomain(context.Background(), "secret-target.example",
			&synthient.DomainLookupParams{Limit: 9})
		require.NoError(t, err, "LookupDomain")
		out := logs.String()
		events := parseLog(t, out)
		require.Len(t, events, 4, "events:\n%s", out)
		assert.Equal(t, "/lookup/ip/{ip}", events[0]["route"], "LookupIP's route")
		assert.Equal(t, "/lookup/domain/{domain}", events[2]["route"], "LookupDomain's route")
		for _, s := range []string{"198.51.100.23", "secret-target", "limit", "?", testKey, "api.test"} {
			assert.NotContains(t, out, s, "the log")
		}
	})
}

// ---- The loop against loopback servers ----

// sampleIPJSON describes sampleIP.
const sampleIPJSON = `{"ip":"203.0.113.7","network":{"asn":64500,"isp":"Example ISP","type":"DATACENTER","org":null,"domain":null,"abuse_email":null,"abuse_phone":null}}`

// sampleBody is the success body for a request path.
func sampleBody(path string) string {
	if strings.HasSuffix(path, "/account/me") {
		return sampleAccountJSON
	}
	return sampleIPJSON
}

// TestLoopbackKeepAliveNoReplay: net/http re-sends a body-less GET on its
// own when a reused keep-alive connection dies after the request was
// written. The server answers the first arrival of the whole test and then
// reads every later request fully and closes its connection without
// answering: the count of arrivals is then exactly one per attempt the
// policy allowed.
func TestLoopbackKeepAliveNoReplay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		call     callFunc
		arrivals int // 1 for the first call, then one per policy attempt
		attempts int
		reason   retry.StopReason
	}{
		{"LookupIP", callLookupIP, 2, 1, retry.MayHaveBeenProcessed},
		{"Account", callAccount, 4, 3, retry.AttemptsExhausted}, // standard class, MaxRetries 2
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := callCtx(t)
			srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n != 1 {
					_, _ = io.Copy(io.Discard, r.Body)
					takeOver(t, w, r) // a later arrival: close without answering
					return
				}
				writeJSON(w, http.StatusOK, sampleBody(r.URL.Path))
			})
			c, logs := loggedClient(t, srv.Base)
			require.NoError(t, tc.call(ctx, c), "first call")
			err := tc.call(ctx, c)
			srv.Finish()
			conns := srv.ArrivalConns()
			require.GreaterOrEqual(t, len(conns), 2, "arrivals by connection %v", conns)
			require.EqualValues(t, 1, conns[1], "arrivals by connection %v: the second request did not reuse the kept-alive connection", conns)
			assert.Equal(t, tc.arrivals, srv.Arrivals(), "arrivals (by connection %v): one per attempt the policy allowed", conns)
			_ = requireConnErr(t, err, false, false)
			_ = requireStop(t, err, tc.attempts, tc.reason)
			assert.Equal(t, tc.arrivals, attemptEvents(logs), "attempt events logged")
		})
	}
}

// TestLoopbackClosedAfterWrite: a fresh connection closed after the
// request was written: the outcome is unknown, so a billed call stops at
// once and a standard one retries.
func TestLoopbackClosedAfterWrite(t *testing.T) {
	t.Parallel()
	// newCloser reads each request and closes its connection without an
	// answer; it keeps the body of the first.
	newCloser := func(t *testing.T) (*apiServer, func() string) {
		var mu sync.Mutex
		var first []byte
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err == nil && n == 1 {
				mu.Lock()
				first = body
				mu.Unlock()
			}
			takeOver(t, w, r)
		})
		return srv, func() string {
			mu.Lock()
			defer mu.Unlock()
			return string(first)
		}
	}

	t.Run("LookupIPs", func(t *testing.T) {
		t.Parallel()
		srv, first := newCloser(t)
		c, _ := loggedClient(t, srv.Base)
		_, err := c.LookupIPs(callCtx(t), []netip.Addr{sampleIP, netip.MustParseAddr("198.51.100.1")})
		srv.Finish()
		assert.Equal(t, 1, srv.Arrivals(), "arrivals")
		assert.Equal(t, `{"ips":["203.0.113.7","198.51.100.1"]}`, first(), "the body the server read") //nolint:testifylint // the bytes sent, not only the JSON they mean
		_ = requireConnErr(t, err, false, false)
		_ = requireStop(t, err, 1, retry.MayHaveBeenProcessed)
	})

	t.Run("Account", func(t *testing.T) {
		t.Parallel()
		srv, _ := newCloser(t)
		c, logs := loggedClient(t, srv.Base)
		_, err := c.Account(callCtx(t))
		srv.Finish()
		assert.Equal(t, 3, srv.Arrivals(), "arrivals")
		_ = requireConnErr(t, err, false, false)
		_ = requireStop(t, err, 3, retry.AttemptsExhausted)
		assert.Equal(t, 3, attemptEvents(logs), "attempt events logged")
	})
}

// TestLoopbackDialRefused: a refused connection: provably not sent; billed
// stops at once, standard retries.
func TestLoopbackDialRefused(t *testing.T) {
	t.Parallel()
	base := "http://" + nettest.DeadAddr(t) + "/api/v4"
	for _, tc := range []struct {
		name     string
		call     callFunc
		attempts int
		reason   retry.StopReason
	}{
		{"LookupIP", callLookupIP, 1, retry.NotRetryable},
		{"Account", callAccount, 3, retry.AttemptsExhausted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, logs := loggedClient(t, base)
			err := tc.call(callCtx(t), c)
			_ = requireConnErr(t, err, true, false)
			_ = requireStop(t, err, tc.attempts, tc.reason)
			assert.Equal(t, tc.attempts, attemptEvents(logs), "attempt events logged:\n%s", logs)
			assert.Equal(t, tc.attempts, strings.Count(logs.String(), `"error":"dial"`), "attempt events that name a dial failure:\n%s", logs)
		})
	}
}

// TestLoopbackNotSentDescribesTheCall: NotSent describes the call, not its
// last attempt: once an attempt may have reached the server (it was read,
// or answered), a later attempt that cannot connect does not make the call
// "not sent". The server goes away after its first request: it stops
// listening and closes the connection, so every retry is refused.
func TestLoopbackNotSentDescribesTheCall(t *testing.T) {
	t.Parallel()
	// goneAfterFirst serves the first request with answer (nil: close
	// without an answer), then closes the listener and the connection.
	goneAfterFirst := func(t *testing.T, answer func(w http.ResponseWriter)) *apiServer {
		var srv *apiServer
		srv = newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			srv.StopListening()
			if answer != nil {
				answer(w)
				_ = http.NewResponseController(w).Flush()
			}
			takeOver(t, w, r)
		})
		return srv
	}
	unavailable := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "4")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "down")
	}
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
	}{
		{"closed after the request was read", nil},
		{"answered 503", unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := goneAfterFirst(t, tc.answer)
			c, _ := loggedClient(t, srv.Base)
			_, err := c.Account(callCtx(t))
			srv.Finish()
			require.Equal(t, 1, srv.Arrivals(), "arrivals")
			ce := requireConnErr(t, err, false, false)
			_ = requireStop(t, err, 3, retry.AttemptsExhausted)
			require.ErrorIs(t, ce.Err, syscall.ECONNREFUSED, "Err: the last attempt's connection refused")
			assert.NotContains(t, err.Error(), "not sent")
			assert.Contains(t, err.Error(), "may have been processed")
		})
	}

	// The call's context ends during the wait after a refused retry: the
	// *Error still reaches a ConnectionError that says the call may have
	// reached the server.
	t.Run("cancelled after a refused retry", func(t *testing.T) {
		t.Parallel()
		srv := goneAfterFirst(t, unavailable)
		ctx, cancel := context.WithCancel(callCtx(t))
		defer cancel()
		var draws atomic.Int32
		// The jitter is drawn once per retry decision: the second draw is
		// the wait after the refused retry.
		jitter := synthient.WithRandom(func() float64 {
			if draws.Add(1) == 2 {
				cancel()
			}
			return 0
		})
		c, _ := loggedClient(t, srv.Base, jitter)
		_, err := c.Account(ctx)
		srv.Finish()
		require.ErrorIs(t, err, context.Canceled)
		_ = requireStop(t, err, 2, retry.ContextDone)
		_ = requireConnErr(t, err, false, false)
		assert.NotContains(t, err.Error(), "not sent")
	})
	// The first attempt is refused; the server then comes up, reads the
	// retry and the caller cancels while it is in flight. The last recorded
	// error is the refused dial, but the call may have reached the server.
	t.Run("cancelled while a retry was in flight", func(t *testing.T) {
		t.Parallel()
		addr := nettest.DeadAddr(t)
		ctx, cancel := context.WithCancel(callCtx(t))
		defer cancel()
		var srv *apiServer
		var draws atomic.Int32
		// The first draw is the wait after the refused attempt: the server
		// starts listening then.
		jitter := synthient.WithRandom(func() float64 {
			if draws.Add(1) == 1 {
				srv = newAPIServer(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
					cancel()
					<-r.Context().Done()
				}, atAddr(t, addr))
			}
			return 0
		})
		c, _ := loggedClient(t, "http://"+addr+"/api/v4", jitter)
		_, err := c.Account(ctx)
		srv.Finish()
		require.Equal(t, 1, srv.Arrivals(), "arrivals")
		require.ErrorIs(t, err, context.Canceled)
		_ = requireStop(t, err, 2, retry.ContextDone)
		_ = requireConnErr(t, err, false, false)
	})
}

// TestLoopbackNotSentWhenCancelledWhileDialing: an attempt that never got
// a connection sent nothing, also when the caller's ctx cut it short while
// it was dialing (net/http then returns the bare context error, which says
// nothing of the connection). The first attempt's TLS handshake runs out
// of OpenTimeout; the caller cancels while the second one is in its
// handshake.
func TestLoopbackNotSentWhenCancelledWhileDialing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	srv := nettest.NewSilent(t, func(n int) { // never answers the ClientHello
		if n == 2 {
			cancel()
		}
	})
	c, _ := loggedClient(t, "https://"+srv.Addr+"/api/v4", synthient.WithOpenTimeout(50*time.Millisecond))
	_, err := c.Account(ctx)
	srv.Close()
	require.ErrorIs(t, err, context.Canceled)
	_ = requireStop(t, err, 2, retry.ContextDone)
	ce := requireConnErr(t, err, true, true)
	// The last attempt's error describes the call as the *Error does.
	var base *synthient.Error
	require.ErrorAs(t, ce, &base, "the *Error of the last attempt's error")
	assert.Equal(t, "Account", base.Op, "Op of the last attempt's error")
	assert.Equal(t, 2, base.Attempts, "Attempts of the last attempt's error")
	assert.Equal(t, 1, strings.Count(err.Error(), "Account"), "message %q names the operation more than once", err)
}

// TestLoopbackFirstAttemptCutByTheContext: when the caller's context cuts
// a call's first attempt short, the error still reaches a
// *ConnectionError that says whether the request can have reached the
// server: not while the client was still connecting, yes once the server
// read it. (A billed call, which the caller may want to send again.)
func TestLoopbackFirstAttemptCutByTheContext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		base    func(t *testing.T, cancel context.CancelFunc) string
		notSent bool
	}{
		{"while connecting", func(t *testing.T, cancel context.CancelFunc) string {
			// The client is in its TLS handshake, which is never answered.
			return "https://" + nettest.NewSilent(t, func(int) { cancel() }).Addr + "/api/v4"
		}, true},
		{"after the request was read", func(t *testing.T, cancel context.CancelFunc) string {
			return newAPIServer(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
				cancel()
				<-r.Context().Done()
			}).Base
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(callCtx(t))
			defer cancel()
			c := newClient(t, tc.base(t, cancel))
			_, err := c.LookupIP(ctx, sampleIP)
			require.ErrorIs(t, err, context.Canceled)
			_ = requireStop(t, err, 1, retry.ContextDone)
			_ = requireConnErr(t, err, tc.notSent, false)
		})
	}
}

// TestLoopbackMalformedAnswer: an answer that is not HTTP, on a JSON
// endpoint: ErrMalformedResponse, sent once (the server would answer the
// same again), and the error does not quote the answer.
func TestLoopbackMalformedAnswer(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(takeOver(t, w, r), "HTTP/1.1 302 Found\r\nLocation: /next?token=s3cr3t-t0ken\x7f\r\nContent-Length: 0\r\n\r\n")
	})
	c, logs := loggedClient(t, srv.Base)
	_, err := c.Account(callCtx(t))
	srv.Finish()
	assert.Equal(t, 1, srv.Arrivals(), "arrivals")
	ce := requireConnErr(t, err, false, false)
	require.ErrorIs(t, ce, synthient.ErrMalformedResponse)
	_ = requireStop(t, err, 1, retry.NotRetryable)
	assertNoSecret(t, err, logs, "s3cr3t")
	assert.NotContains(t, fmt.Sprintf("%#v", ce), "s3cr3t", "the *ConnectionError quotes the answer")
	assert.Contains(t, logs.String(), `"error":"malformed"`, "the log does not name the failure")
}

// TestLoopbackGiveUpKeepsPool: giving up on a call never empties the
// shared pool of idle connections (go-retryablehttp calls
// CloseIdleConnections when it gives up).
func TestLoopbackGiveUpKeepsPool(t *testing.T) {
	t.Parallel()

	t.Run("AfterStatus", func(t *testing.T) {
		t.Parallel()
		ctx := callCtx(t)
		var fail atomic.Bool
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if fail.Load() {
				writeJSON(w, http.StatusServiceUnavailable, `{"title":"down"}`)
				return
			}
			writeJSON(w, http.StatusOK, sampleAccountJSON)
		})
		c, _ := loggedClient(t, srv.Base, synthient.WithMaxRetries(0))
		require.NoError(t, callAccount(ctx, c), "Account")
		fail.Store(true)
		err := callAccount(ctx, c)
		_ = requireAPIErr(t, err, http.StatusServiceUnavailable)
		_ = requireStop(t, err, 1, retry.AttemptsExhausted)
		fail.Store(false)
		require.NoError(t, callAccount(ctx, c), "Account after the 503")
		assert.Equal(t, 1, srv.NewConns(), "connections opened: all three calls on one kept-alive connection")
	})

	t.Run("AfterNetworkFailureSameClient", func(t *testing.T) {
		t.Parallel()
		// Two concurrent calls open two connections; a call whose
		// connection is then dropped gives up, and the other idle
		// connection must still serve the next call.
		ctx := callCtx(t)
		var phase atomic.Int32 // 0: barrier of two, 1: drop once, 2: answer
		var waiting atomic.Int32
		both := make(chan struct{})
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			switch phase.Load() {
			case 0:
				if waiting.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
				case <-r.Context().Done():
					return
				}
			case 1:
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close() // the answer is a dropped connection
				}
				return
			}
			writeJSON(w, http.StatusOK, sampleAccountJSON)
		})
		c, _ := loggedClient(t, srv.Base, synthient.WithMaxRetries(0))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = callAccount(ctx, c) })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err, "concurrent Account")
		}
		require.Equal(t, 2, srv.NewConns(), "connections after two concurrent calls")
		phase.Store(1)
		err := callAccount(ctx, c)
		_ = requireConnErr(t, err, false, false)
		_ = requireStop(t, err, 1, retry.AttemptsExhausted)
		phase.Store(2)
		require.NoError(t, callAccount(ctx, c), "Account after the dropped connection")
		assert.Equal(t, 2, srv.NewConns(), "connections opened: giving up closed the other idle connection")
	})

	t.Run("AfterNetworkFailureOtherServer", func(t *testing.T) {
		t.Parallel()
		// Two clients share one transport: a call to a dead server that
		// gives up must not close the idle connection to the live one.
		ctx := callCtx(t)
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, sampleAccountJSON)
		})
		live, _ := loggedClient(t, srv.Base, synthient.WithTransport(tr))
		dead, _ := loggedClient(t, "http://"+nettest.DeadAddr(t)+"/api/v4", synthient.WithTransport(tr))
		require.NoError(t, callAccount(ctx, live), "Account")
		err := callAccount(ctx, dead)
		_ = requireConnErr(t, err, true, false)
		_ = requireStop(t, err, 3, retry.AttemptsExhausted)
		err = callLookupIP(ctx, dead)
		_ = requireConnErr(t, err, true, false)
		_ = requireStop(t, err, 1, retry.NotRetryable)
		require.NoError(t, callAccount(ctx, live), "Account after the other server failed")
		assert.Equal(t, 1, srv.NewConns(), "connections to the live server: giving up on the other server closed its idle connection")
	})
}

// TestLoopbackErrorBodyCap: an error body is read to at most 64 KiB, then
// the connection is closed rather than drained.
func TestLoopbackErrorBodyCap(t *testing.T) {
	t.Parallel()
	ctx := callCtx(t)
	const size = 1 << 20
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n > 1 {
			writeJSON(w, http.StatusOK, sampleAccountJSON)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.WriteHeader(http.StatusBadRequest)
		chunk := strings.Repeat("x", 32<<10)
		for range size / len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return // the client closed the connection
			}
		}
	})
	c, _ := loggedClient(t, srv.Base)
	err := callAccount(ctx, c)
	ae := requireAPIErr(t, err, http.StatusBadRequest)
	_ = requireStop(t, err, 1, retry.NotRetryable)
	assert.Len(t, ae.Detail, 64<<10, "APIError.Detail")
	require.NoError(t, callAccount(ctx, c), "Account after the large error body")
	assert.Equal(t, 2, srv.NewConns(), "connections opened: the connection of the capped body was reused, so its rest was read")
}

// TestLoopbackRequestHeaders: the headers of every request.
func TestLoopbackRequestHeaders(t *testing.T) {
	t.Parallel()
	ips := []netip.Addr{sampleIP, netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("2001:db8::1")}
	for _, tc := range []struct {
		name, wantUA string
		opts         []synthient.Option
	}{
		{"default", "synthient-go/" + synthient.Version, nil},
		{"WithUserAgent", "synthient-go/" + synthient.Version + " myapp/1.0", []synthient.Option{synthient.WithUserAgent("myapp/1.0")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := callCtx(t)
			var mu sync.Mutex
			bodies := map[string]string{} // by path
			srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies[r.URL.Path] += string(b)
				mu.Unlock()
				p := strings.TrimPrefix(r.URL.Path, "/api/v4")
				switch {
				case p == "/health":
					writeJSON(w, http.StatusOK, `{"status":"ok"}`)
				case p == "/account/me":
					writeJSON(w, http.StatusOK, sampleAccountJSON)
				case p == "/lookup/ips":
					writeJSON(w, http.StatusOK, `{"results":[{"ip":"203.0.113.7"},{"ip":"198.51.100.1"},{"ip":"2001:db8::1"}]}`)
				case strings.HasPrefix(p, "/lookup/ip/"):
					writeJSON(w, http.StatusOK, sampleIPJSON)
				case strings.HasPrefix(p, "/lookup/domain/"):
					writeJSON(w, http.StatusOK, `{"domain":"example.com","status":"ok"}`)
				default:
					writeJSON(w, http.StatusNotFound, `{"title":"not found"}`)
				}
			})
			c, _ := loggedClient(t, srv.Base, tc.opts...)
			noError := func(what string, err error) {
				t.Helper()
				assertNoSecret(t, err, nil)
				require.NoError(t, err, what)
			}
			noError("Account", callAccount(ctx, c))
			noError("LookupIP", callLookupIP(ctx, c))
			res, err := c.LookupIPs(ctx, ips)
			noError("LookupIPs", err)
			assert.Len(t, res, 3, "LookupIPs results")
			_, err = c.LookupDomain(ctx, "example.com", nil)
			noError("LookupDomain", err)
			_, err = c.Health(ctx)
			noError("Health", err)

			got := srv.Requests()
			require.Len(t, got, 5, "requests")
			for _, r := range got {
				what := r.Method + " " + r.Path
				if r.Path == "/api/v4/health" {
					assert.Empty(t, r.Header.Values("X-Api-Key"), "%s carries X-Api-Key", what)
				} else {
					assert.Equal(t, []string{testKey}, r.Header.Values("X-Api-Key"), "%s: X-Api-Key, want exactly the key", what)
				}
				assert.Equal(t, []string{tc.wantUA}, r.Header.Values("User-Agent"), "%s: User-Agent", what)
				assert.Equal(t, []string{"application/json"}, r.Header.Values("Accept"), "%s: Accept", what)
				assert.Empty(t, r.Header.Get("Authorization"), "%s: Authorization", what)
				assert.Empty(t, r.Header.Get("Cookie"), "%s: Cookie", what)
				mu.Lock()
				body := bodies[r.Path]
				mu.Unlock()
				if r.Path == "/api/v4/lookup/ips" {
					assert.Equal(t, http.MethodPost, r.Method, "LookupIPs")
					assert.Equal(t, []string{"application/json"}, r.Header.Values("Content-Type"), "LookupIPs: Content-Type")
					assert.Equal(t, `{"ips":["203.0.113.7","198.51.100.1","2001:db8::1"]}`, body, "LookupIPs body") //nolint:testifylint // the bytes sent, not only the JSON they mean
				} else {
					assert.Equal(t, http.MethodGet, r.Method, "%s: want a GET", what)
					assert.Empty(t, body, "%s: want no body", what)
				}
			}
		})
	}
}

// TestLoopbackNoRedirects: JSON endpoints never follow a redirect: the 3xx
// is the error, and the redirect's target sees nothing. A Location that
// does not parse is no different (net/http would parse it first and fail,
// the URL in its text).
func TestLoopbackNoRedirects(t *testing.T) {
	t.Parallel()
	other := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, sampleBody(r.URL.Path))
	})
	const unparsable = "http://127.0.0.1:1/%zz?sig=LOCATIONSECRET"
	for _, status := range []int{300, 301, 302, 303, 304, 307, 308} {
		for _, bad := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d unparsable=%v", status, bad), func(t *testing.T) {
				t.Parallel()
				ctx := callCtx(t)
				srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
					loc := other.URL + r.URL.Path
					if bad {
						loc = unparsable
					}
					w.Header().Set("Location", loc)
					w.WriteHeader(status)
				})
				c, _ := loggedClient(t, srv.Base)
				for _, call := range []callFunc{callAccount, callLookupIP} {
					err := call(ctx, c)
					_ = requireAPIErr(t, err, status)
					_ = requireStop(t, err, 1, retry.NotRetryable)
					assertNoSecret(t, err, nil, "LOCATIONSECRET")
				}
				assert.Equal(t, 2, srv.Arrivals(), "arrivals")
				assert.Zero(t, other.Arrivals(), "requests the redirect target saw")
			})
		}
	}
}

// TestLoopbackResponseHook: the response hook runs once per API response,
// with the status, the request id and the rate limit; its error is
// returned unchanged.
func TestLoopbackResponseHook(t *testing.T) {
	t.Parallel()

	t.Run("EachAttempt", func(t *testing.T) {
		t.Parallel()
		ctx := callCtx(t)
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/health") {
				w.Header().Set("X-Request-Id", "req-health")
				writeJSON(w, http.StatusOK, `{"status":"ok"}`)
				return
			}
			h := w.Header()
			h.Set("X-Request-Id", fmt.Sprint("req-", n))
			h.Set("RateLimit-Limit", "100")
			h.Set("RateLimit-Remaining", fmt.Sprint(100-n))
			h.Set("RateLimit-Reset", fmt.Sprint(60-n))
			if n < 3 {
				writeJSON(w, http.StatusServiceUnavailable, `{"title":"down"}`)
				return
			}
			writeJSON(w, http.StatusOK, sampleAccountJSON)
		})
		var mu sync.Mutex
		var infos []*synthient.ResponseInfo
		// seen returns the infos the hook got since the last call.
		seen := func() []*synthient.ResponseInfo {
			mu.Lock()
			defer mu.Unlock()
			got := infos
			infos = nil
			return got
		}
		c, _ := loggedClient(t, srv.Base, synthient.WithResponseHook(func(ri *synthient.ResponseInfo) error {
			mu.Lock()
			infos = append(infos, ri)
			mu.Unlock()
			return nil
		}))
		err := callAccount(ctx, c)
		assertNoSecret(t, err, nil)
		require.NoError(t, err, "Account")
		got := seen()
		require.Len(t, got, 3, "hook runs: once per response")
		for i, ri := range got {
			n := i + 1
			wantStatus := http.StatusServiceUnavailable
			if n == 3 {
				wantStatus = http.StatusOK
			}
			assert.Equal(t, wantStatus, ri.Status, "response %d: Status", n)
			assert.Equal(t, fmt.Sprint("req-", n), ri.RequestID, "response %d: RequestID", n)
			assert.Equal(t, fmt.Sprint("req-", n), ri.Header.Get("X-Request-Id"), "response %d: X-Request-Id", n)
			want := synthient.RateLimit{Limit: 100, Remaining: 100 - n, Reset: time.Duration(60-n) * time.Second}
			assert.Equal(t, &want, ri.RateLimit, "response %d: RateLimit", n)
		}

		_, err = c.Health(ctx)
		assertNoSecret(t, err, nil)
		require.NoError(t, err, "Health")
		got = seen()
		require.Len(t, got, 1, "hook runs for /health")
		assert.Equal(t, http.StatusOK, got[0].Status, "/health: Status")
		assert.Equal(t, "req-health", got[0].RequestID, "/health: RequestID")
		assert.Nil(t, got[0].RateLimit, "/health: RateLimit")
	})

	t.Run("Error", func(t *testing.T) {
		t.Parallel()
		ctx := callCtx(t)
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/account/me") {
				writeJSON(w, http.StatusServiceUnavailable, `{"title":"down"}`)
				return
			}
			writeJSON(w, http.StatusOK, sampleIPJSON)
		})
		hookErr := errors.New("the hook refuses")
		var calls atomic.Int64
		c, _ := loggedClient(t, srv.Base, synthient.WithResponseHook(func(*synthient.ResponseInfo) error {
			calls.Add(1)
			return hookErr
		}))
		err := callAccount(ctx, c) // a 503 the standard class would retry
		assert.Same(t, hookErr, err, "Account: want the hook's error itself")
		assert.Equal(t, 1, srv.Arrivals(), "arrivals: the hook's error stops the call")
		assert.EqualValues(t, 1, calls.Load(), "hook runs")
		err = callLookupIP(ctx, c) // a 200
		assert.Same(t, hookErr, err, "LookupIP: want the hook's error itself")
		assert.Equal(t, 2, srv.Arrivals(), "arrivals")
	})
}

// TestLoopbackRetryAfterContext: waiting out a Retry-After against a real
// server: a cancelled ctx ends the wait at once, and a wait that would pass
// the ctx deadline is not started. The Retry-Afters are an hour and ten
// minutes (waited out up to two hours), far past a bound that only a hang
// outlasts.
func TestLoopbackRetryAfterContext(t *testing.T) {
	t.Parallel()
	newLimiter := func(t *testing.T, retryAfter string) *apiServer {
		return newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", retryAfter)
			w.Header().Set("X-Request-Id", fmt.Sprint("req-", n))
			writeJSON(w, http.StatusTooManyRequests, `{"title":"slow down"}`)
		})
	}

	t.Run("Cancel", func(t *testing.T) {
		t.Parallel()
		srv := newLimiter(t, "3600")
		c, logs := loggedClient(t, srv.Base, synthient.WithMaxRetryAfter(2*time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() {
			// Cancel once the server saw the request and the client
			// decided to wait out the hour.
			assert.Eventually(t, func() bool {
				return ctx.Err() != nil || srv.Arrivals() >= 1 && strings.Contains(logs.String(), `"decision":"retry"`)
			}, 2*time.Minute, 2*time.Millisecond, "the decision to retry")
			cancel()
		})
		start := time.Now()
		err := callAccount(ctx, c)
		elapsed := time.Since(start)
		cancel()
		wg.Wait()
		// Only a hang breaks it: "the hour's wait was not served".
		assert.Less(t, elapsed, 2*time.Minute, "the call's duration: the cancellation did not end the wait")
		require.ErrorIs(t, err, context.Canceled)
		ae := requireAPIErr(t, err, http.StatusTooManyRequests)
		assert.Equal(t, ptr(time.Hour), ae.RetryAfter, "APIError.RetryAfter")
		assert.Equal(t, "req-1", ae.RequestID, "APIError.RequestID")
		_ = requireStop(t, err, 1, retry.ContextDone)
		assert.Equal(t, 1, srv.Arrivals(), "arrivals")
		// The stop event names the outcome of the attempt it ends.
		events := parseLog(t, logs.String())
		require.NotEmpty(t, events, "log events")
		last := len(events) - 1
		assertLogFields(t, last, events[last], map[string]any{
			"reason": retry.ContextDone, "status": 429, "request_id": "req-1", "level": "INFO",
		})
	})

	t.Run("Deadline", func(t *testing.T) {
		t.Parallel()
		srv := newLimiter(t, "600")
		c, _ := loggedClient(t, srv.Base, synthient.WithMaxRetryAfter(2*time.Hour))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err := callLookupIP(ctx, c)
		require.NoError(t, ctx.Err(), "the call returned only after its deadline passed: it did not stop at once")
		ae := requireAPIErr(t, err, http.StatusTooManyRequests)
		assert.Equal(t, ptr(10*time.Minute), ae.RetryAfter, "APIError.RetryAfter")
		_ = requireStop(t, err, 1, retry.RetryAfterExceedsDeadline)
		require.NotErrorIs(t, err, context.DeadlineExceeded, "the deadline had not passed")
		assert.Equal(t, 1, srv.Arrivals(), "arrivals")
	})
}

// ---- Response bodies ----

// closeCounter hands out every response body wrapped in a closer that
// counts: after each call, every body it handed out must have been closed.
type closeCounter struct {
	rt             http.RoundTripper
	opened, closed atomic.Int64
}

func (t *closeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		t.opened.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, t: t}
	}
	return resp, err
}

// countedBody counts its first Close.
type countedBody struct {
	io.ReadCloser
	t    *closeCounter
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.t.closed.Add(1) })
	return b.ReadCloser.Close()
}

// TestBodyCloseEveryPath runs each kind of call end — success, error
// statuses, a hook error, a body that does not decode, downloads that
// succeed and fail, streams read to the end, broken out of and cancelled,
// an export listing broken out of — and checks after each that every
// response body the transport handed out was closed, and that the scenario
// did hand out the bodies it should (so none passes by sending nothing).
// The scenarios share one fake API and one transport, in turn.
//
//nolint:paralleltest // the scenarios share one transport, whose bodies each counts in turn
func TestBodyCloseEveryPath(t *testing.T) {
	// 14:20 UTC: the fake's day has 14 hourly exports.
	clk := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
	srv := synthienttest.NewServer(
		synthienttest.WithClock(clk.Now),
		synthienttest.WithoutRateLimits(),
		synthienttest.WithEventInterval(5*time.Millisecond),
		synthienttest.WithMaxEvents(4),
	)
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	tr := &closeCounter{rt: base}
	for _, sc := range bodyCloseScenarios(t, srv, tr) {
		t.Run(sc.name, func(t *testing.T) {
			o0, c0 := tr.opened.Load(), tr.closed.Load()
			sc.run(t)
			opened, closed := tr.opened.Load()-o0, tr.closed.Load()-c0
			assert.Equal(t, sc.bodies, opened, "bodies the transport handed out")
			assert.Equal(t, opened, closed, "bodies closed when the call returned")
		})
	}
}

// bodyCloseScenario is one way a call ends.
type bodyCloseScenario struct {
	name   string
	bodies int64 // bodies the transport must hand out
	run    func(t *testing.T)
}

// bodyCloseScenarios returns the scenarios of TestBodyCloseEveryPath, on
// clients of the fake srv over tr, in the order they run: a scenario
// injects the faults of its own call.
func bodyCloseScenarios(t *testing.T, srv *synthienttest.Server, tr http.RoundTripper) []bodyCloseScenario {
	errHook := errors.New("hook refuses the response")
	c := fakeClient(t, srv, synthient.WithTransport(tr))
	hooked := fakeClient(t, srv, synthient.WithTransport(tr),
		synthient.WithResponseHook(func(*synthient.ResponseInfo) error { return errHook }))
	ctx := context.Background()
	ip := netip.MustParseAddr("203.0.113.9")
	requireConn := func(t *testing.T, err error) {
		t.Helper()
		var ce *synthient.ConnectionError
		require.ErrorAs(t, err, &ce)
	}
	return []bodyCloseScenario{
		{"LookupIP", 1, func(t *testing.T) {
			_, err := c.LookupIP(ctx, ip)
			require.NoError(t, err)
		}},
		{"Account", 1, func(t *testing.T) {
			_, err := c.Account(ctx)
			require.NoError(t, err)
		}},
		{"LookupIPs", 1, func(t *testing.T) {
			_, err := c.LookupIPs(ctx, []netip.Addr{ip, netip.MustParseAddr("2001:db8::1")})
			require.NoError(t, err)
		}},
		{"ExportMeta", 1, func(t *testing.T) {
			_, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09")
			require.NoError(t, err)
		}},
		{"ListExports", 1, func(t *testing.T) {
			_, err := c.ListExports(ctx, synthient.FeedProxies, nil)
			require.NoError(t, err)
		}},
		{"429_retry_after_over_max", 1, func(t *testing.T) {
			srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "120"})
			_, err := c.LookupIP(ctx, ip)
			_ = requireAPIErr(t, err, 429)
		}},
		{"503_retried_then_exhausted", 3, func(t *testing.T) {
			srv.Inject(synthienttest.RouteAccount, 3, statusFault(503))
			_, err := c.Account(ctx)
			_ = requireAPIErr(t, err, 503)
		}},
		{"404", 1, func(t *testing.T) {
			srv.Inject(synthienttest.RouteExportMeta, 1, statusFault(404))
			_, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09")
			_ = requireAPIErr(t, err, 404)
		}},
		{"hook_error", 1, func(t *testing.T) {
			_, err := hooked.Account(ctx)
			require.ErrorIs(t, err, errHook)
		}},
		{"hook_error_on_error_status", 1, func(t *testing.T) {
			srv.Inject(synthienttest.RouteLookupIP, 1, statusFault(500))
			_, err := hooked.LookupIP(ctx, ip)
			require.ErrorIs(t, err, errHook)
		}},
		{"decode_error", 1, func(t *testing.T) {
			srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 200,
				Body: `{"email": 42`, ContentType: "application/json"})
			_, err := c.Account(ctx)
			var de *synthient.DecodeError
			require.ErrorAs(t, err, &de)
		}},
		{"truncated_json_body", 1, func(t *testing.T) {
			srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody})
			_, err := c.LookupIP(ctx, ip)
			requireConn(t, err)
		}},
		{"download_success", 2, func(t *testing.T) {
			n, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/13", io.Discard)
			require.NoError(t, err)
			assert.NotZero(t, n, "bytes downloaded")
		}},
		{"download_storage_500", 2, func(t *testing.T) {
			srv.Inject(synthienttest.RouteStorage, 1, statusFault(500))
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/13", io.Discard)
			_ = requireAPIErr(t, err, 500)
		}},
		{"download_storage_reset_mid_body", 2, func(t *testing.T) {
			srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/13", io.Discard)
			requireConn(t, err)
		}},
		{"download_api_404", 1, func(t *testing.T) {
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2001-01-01", io.Discard)
			_ = requireAPIErr(t, err, 404)
		}},
		{"download_file_verified", 3, func(t *testing.T) {
			_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-09", filepath.Join(t.TempDir(), "x.parquet"),
				&synthient.DownloadParams{Verify: true})
			require.NoError(t, err)
		}},
		{"stream_to_its_end", 1, func(t *testing.T) {
			events, errs, _ := drain(c.StreamProxies(ctx), 0)
			require.Empty(t, errs)
			assert.Len(t, events, 4, "the stream's events")
		}},
		{"stream_break_after_one_event", 1, func(t *testing.T) {
			_, errs, _ := drain(c.StreamRaw(ctx, synthient.FeedTorrents), 1)
			require.Empty(t, errs)
		}},
		{"stream_ctx_cancelled_mid_way", 1, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			n := 0
			for _, err := range c.StreamJA4T(cctx) {
				n++
				if n == 1 {
					require.NoError(t, err, "the first event")
					cancel()
				}
			}
		}},
		{"stream_read_error", 1, func(t *testing.T) {
			// The fault sends the real answer's first bytes: the streams
			// the scenarios before left must be closed on the server too,
			// or the real answer is a 429 (at most 2 open streams).
			require.Eventually(t, func() bool { return srv.OpenStreams() == 0 }, time.Minute, time.Millisecond)
			srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
			_, errs, itemAfterErr := drain(c.StreamAnonymizers(ctx), 0)
			require.NotEmpty(t, errs, "want a *ConnectionError ending the stream")
			assert.False(t, itemAfterErr, "an event after the error")
			requireConn(t, errs[len(errs)-1])
		}},
		{"stream_open_exhausted", 3, func(t *testing.T) {
			srv.Inject(synthienttest.RouteStream, 3, statusFault(502))
			_, errs, itemAfterErr := drain(c.StreamProxies(ctx), 0)
			require.NotEmpty(t, errs, "want a 502 *APIError")
			assert.False(t, itemAfterErr, "an event after the error")
			_ = requireAPIErr(t, errs[len(errs)-1], 502)
		}},
		{"all_exports_break", 1, func(t *testing.T) {
			listed, errs, _ := drain(c.AllExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2}), 1)
			require.Empty(t, errs)
			assert.Len(t, listed, 1, "exports listed")
		}},
	}
}

// ---- The client-wide retry quota ----

// outage runs calls concurrent Account calls against a server that answers
// every request with status (a 429 with Retry-After: 0), and returns the
// requests it received and the calls' errors.
func outage(t *testing.T, status, calls int, opts ...synthient.Option) (int, []error) {
	t.Helper()
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(status)
	})
	c := newClient(t, srv.Base, opts...)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { errs[i] = callAccount(context.Background(), c) })
	}
	wg.Wait()
	srv.Finish()
	return srv.Arrivals(), errs
}

// TestRetryQuotaBoundsAnOutage: with the default quota (500 tokens, 10 per
// retry after a 5xx) and nothing succeeding, 200 calls send their 200 first
// attempts and exactly 500/10 = 50 retries in all, instead of 400.
func TestRetryQuotaBoundsAnOutage(t *testing.T) {
	t.Parallel()
	const calls = 200
	arrivals, errs := outage(t, http.StatusServiceUnavailable, calls)
	const want = calls + 500/10 // the documented default quota
	require.Equal(t, want, arrivals, "requests: one per call plus %d retries", want-calls)
	retries, quotaStops := 0, 0
	for _, err := range errs {
		_ = requireAPIErr(t, err, http.StatusServiceUnavailable)
		var base *synthient.Error
		require.ErrorAs(t, err, &base)
		retries += base.Attempts - 1
		require.Contains(t, []retry.StopReason{retry.QuotaExhausted, retry.AttemptsExhausted}, base.StopReason, "stop reason")
		if base.StopReason == retry.QuotaExhausted {
			quotaStops++
		}
	}
	require.Equal(t, arrivals-calls, retries, "retries the errors count, against those the server saw")
	require.GreaterOrEqual(t, quotaStops, calls-retries/2, "calls stopped on the quota")
}

// TestRetryQuotaBoundsThrottling: by default a retry after a 429 with a
// usable Retry-After is free (the server paces the client), so 200
// rate-limited calls each retry twice; with a throttle cost of 5 of 500
// tokens they send 100 retries in all, not 400.
func TestRetryQuotaBoundsThrottling(t *testing.T) {
	t.Parallel()
	const calls = 200
	for _, tc := range []struct {
		name string
		opts []synthient.Option
		want int
	}{
		{"default: free", nil, 3 * calls},
		{"throttle cost 5", []synthient.Option{synthient.WithRetryQuota(500, 10, 5)}, calls + 500/5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			arrivals, errs := outage(t, http.StatusTooManyRequests, calls, tc.opts...)
			require.Equal(t, tc.want, arrivals, "requests")
			for _, err := range errs {
				_ = requireAPIErr(t, err, http.StatusTooManyRequests)
			}
		})
	}
}

// TestWithoutRetryQuota: without the quota every call retries twice.
func TestWithoutRetryQuota(t *testing.T) {
	t.Parallel()
	const calls = 200
	arrivals, _ := outage(t, http.StatusServiceUnavailable, calls, synthient.WithoutRetryQuota())
	require.Equal(t, 3*calls, arrivals, "requests")
}

// TestWithRetryQuota: a custom quota bounds the retries by its own numbers.
func TestWithRetryQuota(t *testing.T) {
	t.Parallel()
	const calls = 50
	arrivals, _ := outage(t, http.StatusServiceUnavailable, calls, synthient.WithRetryQuota(100, 20, 5))
	require.Equal(t, calls+100/20, arrivals, "requests")
	for _, bad := range [][3]int{{0, 10, 5}, {500, 0, 5}, {500, 10, -1}} {
		_, err := synthient.NewClient(testKey, synthient.WithRetryQuota(bad[0], bad[1], bad[2]))
		require.ErrorIs(t, err, synthient.ErrInvalidArgument, "WithRetryQuota%v", bad)
	}
	_, err := synthient.NewClient(testKey, synthient.WithRetryQuota(500, 10, 0))
	assert.NoError(t, err, "WithRetryQuota with a free throttle")
}

// A caller's own httptrace hooks run for its calls alone: the client's
// pooled connection trace never takes them in, whatever calls reuse it,
// also when traced calls run at once (the race detector watches).
//
//nolint:tparallel // the subtests share one client and its pooled connection: the first makes its calls one after another, alone
func TestCallerTraceIsItsCallsAlone(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, sampleBody(r.URL.Path))
	})
	c := newClient(t, srv.Base)
	traced := func(n *atomic.Int32) context.Context {
		return httptrace.WithClientTrace(callCtx(t), &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { n.Add(1) },
		})
	}

	t.Run("one after another", func(t *testing.T) {
		var first atomic.Int32
		require.NoError(t, callAccount(traced(&first), c))
		for range 5 {
			require.NoError(t, callAccount(callCtx(t), c))
		}
		var second atomic.Int32
		for range 3 {
			require.NoError(t, callAccount(traced(&second), c))
		}
		assert.EqualValues(t, 1, first.Load(), "hooks of the first traced call")
		assert.EqualValues(t, 3, second.Load(), "hooks of the later traced calls")
	})

	t.Run("at once", func(t *testing.T) {
		var wg sync.WaitGroup
		counts := make([]atomic.Int32, 8)
		for i := range counts {
			wg.Go(func() {
				for range 4 {
					assert.NoError(t, callAccount(traced(&counts[i]), c))
				}
			})
		}
		wg.Wait()
		for i := range counts {
			assert.EqualValues(t, 4, counts[i].Load(), "hooks of goroutine %d", i)
		}
	})
}
