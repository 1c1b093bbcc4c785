package synthient_test

// Tests of pace.go: rate-limit pacing, on a mocked transport inside
// synctest bubbles, where time is fake: a request's arrival time (mockAPI)
// says whether, and how long, the client held it, with no real wait.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

const lookupPath = "/api/v4/lookup/ip/203.0.113.7" // callLookupIP's

// lookupMock returns a mockAPI answering LookupIP with script.
func lookupMock(t *testing.T, script ...httpmock.Responder) *mockAPI {
	return newMockAPI(t, nil).Route(http.MethodGet, lookupPath, script...)
}

// lookupAnyMock is lookupMock for LookupIP of any address (callLookupIPAt):
// an answer for 203.0.113.7 is made one for the address asked.
func lookupAnyMock(t *testing.T, script ...httpmock.Responder) *mockAPI {
	echo := make([]httpmock.Responder, len(script))
	for i, r := range script {
		echo[i] = echoIP(r)
	}
	return newMockAPI(t, nil).RoutePrefix(http.MethodGet, "/api/v4/lookup/ip/", echo...)
}

// echoIP is next, answering for the address of the request's path where
// next answers for 203.0.113.7.
func echoIP(next httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || resp.Body == nil {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		asked := path.Base(req.URL.Path)
		body = bytes.ReplaceAll(body, []byte(`"ip":"203.0.113.7"`), []byte(`"ip":"`+asked+`"`))
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return resp, nil
	}
}

// okLookup is a LookupIP 200 that says the bucket's state.
func okLookup(limit, remaining, reset int) httpmock.Responder {
	return answer(http.StatusOK, `{"ip":"203.0.113.7"}`, append(rateLimitKV(limit, remaining, reset), "Content-Type", "application/json")...)
}

// since returns each request's arrival after t0.
func since(t0 time.Time, reqs []mockRequest) []time.Duration {
	out := make([]time.Duration, len(reqs))
	for i, r := range reqs {
		out[i] = r.At.Sub(t0)
	}
	return out
}

// TestPacingNoHoldWhileTokensRemain: while the answers say tokens remain
// and no other client spends them, serial calls go out at once (no fake
// time passes), whatever the model learnt of the rate.
func TestPacingNoHoldWhileTokensRemain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		script []httpmock.Responder
	}{
		{"rate not known well", []httpmock.Responder{okLookup(20, 19, 1)}},
		{"the bucket falls by this client's calls alone", []httpmock.Responder{
			okLookup(20, 19, 1), okLookup(20, 18, 1), okLookup(20, 17, 1), okLookup(20, 16, 1), okLookup(20, 15, 1),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := lookupMock(t, tc.script...)
				c := m.Client(t)
				t0 := time.Now()
				for range 5 {
					require.NoError(t, callLookupIP(callCtx(t), c))
				}
				assert.Equal(t, make([]time.Duration, 5), since(t0, m.Requests()), "arrivals")
			})
		})
	}
}

// TestPacingHoldsWhileBucketEmpty: once the answers say the bucket is
// spent, the next request goes out only when the server's bucket has a
// token again, and the server never answers 429. The hold is logged at
// Debug, without secrets.
func TestPacingHoldsWhileBucketEmpty(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bk := newRateLimited(1, 2, `{"ip":"203.0.113.7"}`)
		m := lookupMock(t, bk.Respond)
		c, logs := loggedClient(t, mockBase, synthient.WithTransport(m.MockTransport))
		t0 := time.Now()
		for range 4 {
			require.NoError(t, callLookupIP(callCtx(t), c))
		}
		at := since(t0, m.Requests())
		require.Len(t, at, 4)
		assert.Zero(t, at[1], "the second request: a token remained")
		assert.GreaterOrEqual(t, at[2]-at[1], time.Second, "the third waits for the refill")
		assert.GreaterOrEqual(t, at[3]-at[2], time.Second, "the fourth too")
		assert.Zero(t, bk.Throttled(), "429s answered")
		assert.Contains(t, logs.String(), `"msg":"synthient: pacing"`)
		assert.Contains(t, logs.String(), `"bucket":"lookup"`)
		assert.Contains(t, logs.String(), `"decision":"hold"`)
	})
}

// TestPacingProbe: 64 concurrent first calls against a bucket of burst 20
// draw no 429 with pacing: the first few are probes and the others wait
// for their answers, then go as the model allows. Without pacing 44 of the first
// 64 requests are turned away.
func TestPacingProbe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    []synthient.Option
		want429 bool
	}{
		{"pacing", nil, false},
		{"WithoutPacing", []synthient.Option{synthient.WithoutPacing()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				bk := newRateLimited(20, 20, `{"ip":"203.0.113.7"}`)
				m := lookupAnyMock(t, bk.Respond)
				c := m.Client(t, append([]synthient.Option{synthient.WithMaxRetries(0)}, tc.opts...)...)
				const calls = 64
				errs := make([]error, calls)
				var wg sync.WaitGroup
				for i := range calls {
					wg.Go(func() { errs[i] = callLookupIPAt(callCtx(t), c, i) })
				}
				wg.Wait()
				if !tc.want429 {
					assert.Zero(t, bk.Throttled(), "429s answered")
					assert.Len(t, m.Requests(), calls, "requests")
					for _, err := range errs {
						require.NoError(t, err)
					}
					return
				}
				assert.Equal(t, calls-20, bk.Throttled(), "429s answered")
			})
		})
	}
}

// TestPacing429DrainsTheModel: a 429 with a usable Retry-After empties
// the model, whatever tokens it still counted: with a known rate the next
// request waits for a token; without one, for the Retry-After.
func TestPacing429DrainsTheModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		first    httpmock.Responder
		throttle httpmock.Responder
		wait     time.Duration // the least hold of the third call
	}{
		{
			"rate known", okLookup(20, 19, 1),
			problem(http.StatusTooManyRequests, append(rateLimitKV(20, 0, 2), "Retry-After", "1")...),
			100 * time.Millisecond, // a token at 10/s
		},
		{
			"no rate known, no headers on the 429", okLookup(20, 19, 1),
			problem(http.StatusTooManyRequests, "Retry-After", "3"),
			3 * time.Second,
		},
		{
			// Not waited out by the call (past MaxRetryAfter), nor by the
			// next one.
			"Retry-After past the maximum", okLookup(20, 19, 1),
			problem(http.StatusTooManyRequests, "Retry-After", "120"),
			0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := lookupMock(t, tc.first, tc.throttle, okLookup(20, 19, 1))
				c := m.Client(t, synthient.WithMaxRetries(0))
				require.NoError(t, callLookupIP(callCtx(t), c))
				_ = requireAPIErr(t, callLookupIP(callCtx(t), c), http.StatusTooManyRequests)
				require.NoError(t, callLookupIP(callCtx(t), c))
				reqs := m.Requests()
				at := since(reqs[0].At, reqs)
				require.Len(t, at, 3)
				assert.Zero(t, at[1]-at[0], "the second request: the model had tokens")
				assert.GreaterOrEqual(t, at[2]-at[1], tc.wait, "the third request's hold")
				if tc.wait == 0 {
					assert.Zero(t, at[2]-at[1], "no hold")
				}
			})
		})
	}
}

// TestPacingHoldPastDeadline: while a 429 confirms the model, a hold that
// would pass the context's deadline stops the call at once (no fake time
// passes in the hold), without sending: pacing_exceeds_deadline,
// ErrRateLimitHold. A first attempt's error is a *ConnectionError with
// NotSent set; a retry's reaches the last *APIError. Before a 429, such an
// attempt goes, to probe the model (TestPacingSuccessesCorrectTheModel).
func TestPacingHoldPastDeadline(t *testing.T) {
	t.Parallel()
	// A bucket of 10 refilling at 0.1/s, spent: a token in 10 s.
	spent := rateLimitKV(10, 0, 100)
	t.Run("first attempt", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			m := lookupMock(t, okLookup(10, 0, 100), problem(http.StatusTooManyRequests, append(spent, "Retry-After", "100")...))
			c := m.Client(t)
			require.NoError(t, callLookupIP(callCtx(t), c))
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := callLookupIP(ctx, c)
			_ = requireStop(t, err, 1, retry.RetryAfterExceedsMax) // the probe, answered 429
			require.Len(t, m.Requests(), 2, "requests: the probe was sent")
			t0 := time.Now()
			err = callLookupIP(ctx, c)
			assert.Zero(t, time.Since(t0), "time spent")
			require.ErrorIs(t, err, synthient.ErrRateLimitHold)
			_ = requireStop(t, err, 0, retry.PacingExceedsDeadline)
			_ = requireConnErr(t, err, true, false)
			assert.Contains(t, err.Error(), "held by rate-limit pacing (request not sent)", "the error says pacing held it")
			assert.Len(t, m.Requests(), 2, "requests: the held one was not sent")
		})
	})
	t.Run("retry", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			m := lookupMock(t, problem(http.StatusTooManyRequests, append(spent, "Retry-After", "1")...))
			c := m.Client(t)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			t0 := time.Now()
			err := callLookupIP(ctx, c)
			assert.Less(t, time.Since(t0), 2*time.Second, "time spent: the retry's wait alone")
			require.ErrorIs(t, err, synthient.ErrRateLimitHold)
			_ = requireStop(t, err, 1, retry.PacingExceedsDeadline)
			ae := requireAPIErr(t, err, http.StatusTooManyRequests)
			require.NotNil(t, ae.RetryAfter)
			assert.Len(t, m.Requests(), 1, "requests: the held retry was not sent")
		})
	})
}

// TestPacingCancelDuringHold: cancelling the context ends a hold at once:
// context_done, errors.Is(err, context.Canceled), nothing sent. The
// cancelled turn is given back: the next call goes at the turn the
// cancelled one had, not after it.
func TestPacingCancelDuringHold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := lookupMock(t, okLookup(10, 0, 100)) // a token each 10 s
		c := m.Client(t)
		require.NoError(t, callLookupIP(callCtx(t), c))
		t0 := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- callLookupIP(ctx, c) }()
		time.Sleep(time.Second)
		cancel()
		err := <-done
		assert.Equal(t, time.Second, time.Since(t0), "the hold ended with the context")
		require.ErrorIs(t, err, context.Canceled)
		_ = requireStop(t, err, 0, retry.ContextDone)
		_ = requireConnErr(t, err, true, false)
		require.Len(t, m.Requests(), 1, "requests: the cancelled one was not sent")

		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Minute)
		defer cancel2()
		require.NoError(t, callLookupIP(ctx2, c))
		at := since(t0, m.Requests())
		assert.Less(t, at[1], 20*time.Second, "the next call's turn: the cancelled turn was given back")
		assert.GreaterOrEqual(t, at[1], 10*time.Second, "the next call waited for a token")
	})
}

// TestPacingNeverSlows: what pacing never holds, however spent the
// answers say the bucket is: any call WithoutPacing, every call of a
// server that sends no RateLimit headers (concurrent first calls too), and
// Health, which has no rate limit.
func TestPacingNeverSlows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		route  opCase
		answer httpmock.Responder
		opts   []synthient.Option
	}{
		// LookupIPs, whose concurrent calls each send a request (identical
		// LookupIP calls in flight would share one).
		{"WithoutPacing", opNamed("LookupIPs"), answer(http.StatusOK, `{"results":[{"ip":"1.2.3.4"}]}`, rateLimitKV(10, 0, 100)...), []synthient.Option{synthient.WithoutPacing()}},
		{"no RateLimit headers", opNamed("LookupIPs"), opSucceeds, nil},
		{"Health", opNamed("Health"), answer(http.StatusOK, `{"status":"ok"}`, rateLimitKV(10, 0, 100)...), nil},
		// Headers that say a token comes back once an hour: a turn past
		// MaxRetryAfter is not waited for, the server decides.
		{"a turn past the maximum", opNamed("LookupIPs"), answer(http.StatusOK, `{"results":[{"ip":"1.2.3.4"}]}`, rateLimitKV(1, 0, 3600)...), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := newOpMock(t, tc.route, tc.answer)
				c := m.Client(t, tc.opts...)
				t0 := time.Now()
				require.NoError(t, tc.route.call(callCtx(t), c))
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() { assert.NoError(t, tc.route.call(callCtx(t), c)) })
				}
				wg.Wait()
				require.NoError(t, tc.route.call(callCtx(t), c))
				assert.Equal(t, make([]time.Duration, 10), since(t0, m.Requests()), "arrivals")
			})
		})
	}
}

// TestPacingStorageLegNotPaced: a download's API leg is paced (download
// bucket), its storage leg never: the storage request follows a 307 that
// says the bucket is spent at once, and the next download's API leg waits.
func TestPacingStorageLegNotPaced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		const storage = "https://storage.test"
		m := newMockAPI(t, nil).Route(http.MethodGet, "/api/v4/feeds/proxies/export/2026-06-10/14",
			answer(http.StatusTemporaryRedirect, "", append(rateLimitKV(120, 0, 1200), "Location", presigned(storage))...))
		m.RegisterResponder(http.MethodGet, storage+presignObject, m.record(answer(http.StatusOK, "abc", rateLimitKV(120, 0, 1200)...)))
		c := m.Client(t)
		t0 := time.Now()
		for range 2 {
			var sb strings.Builder
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/14", &sb)
			require.NoError(t, err)
			assert.Equal(t, "abc", sb.String())
		}
		at := since(t0, m.Requests())
		require.Len(t, at, 4, "API, storage, API, storage")
		assert.Zero(t, at[1], "the storage leg is not held")
		assert.GreaterOrEqual(t, at[2], 10*time.Second, "the second API leg waits for a token (0.1/s)")
		assert.Equal(t, at[2], at[3], "nor is the second storage leg")
	})
}

// TestPacingBucketsIndependent: a spent bucket holds its own operations
// alone: Account's spent limit does not hold LookupIP.
func TestPacingBucketsIndependent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		acct := opNamed("Account")
		m := newMockAPI(t, nil).
			Route(http.MethodGet, acct.path, answer(http.StatusOK, acct.success, append(rateLimitKV(10, 0, 1), "Content-Type", "application/json")...)).
			Route(http.MethodGet, lookupPath, okLookup(200, 199, 1))
		c := m.Client(t)
		t0 := time.Now()
		require.NoError(t, callAccount(callCtx(t), c))
		require.NoError(t, callLookupIP(callCtx(t), c))
		require.NoError(t, callAccount(callCtx(t), c))
		at := since(t0, m.Requests())
		require.Len(t, at, 3)
		assert.Zero(t, at[1], "LookupIP goes at once")
		assert.GreaterOrEqual(t, at[2], 100*time.Millisecond, "Account waits for its token (10/s)")
	})
}

// TestPacingConcurrentCallsNotHeld: concurrent callers are never held
// while the server says its bucket has tokens, however long they run, nor
// by answers whose RateLimit headers are unusable (as without any): eight
// goroutines making 100 calls each, the server taking 100 ms an answer,
// take 100 answers' time, and the first probe's. The model, which refills only at a rate it
// trusts, once emptied by those calls held all but one of them in flight.
func TestPacingConcurrentCallsNotHeld(t *testing.T) {
	t.Parallel()
	const callers, calls, latency = 8, 100, 100 * time.Millisecond
	for _, tc := range []struct {
		name   string
		start  int // answers' times before all 8 are in flight
		answer func() httpmock.Responder
	}{
		// 80 calls a second, below the rate: the bucket stays nearly full.
		{"bucket never spent", 3, func() httpmock.Responder {
			return newRateLimited(100, 200, `{"ip":"203.0.113.7"}`).Respond
		}},
		{"RateLimit-Reset missing", 1, func() httpmock.Responder {
			return answer(http.StatusOK, `{"ip":"203.0.113.7"}`, "Content-Type", "application/json",
				"RateLimit-Limit", "100", "RateLimit-Remaining", "99")
		}},
		{"RateLimit-Limit 0", 1, func() httpmock.Responder { return okLookup(0, 0, 0) }},
		{"RateLimit-Limit not a number", 1, func() httpmock.Responder {
			return answer(http.StatusOK, `{"ip":"203.0.113.7"}`, "Content-Type", "application/json",
				"RateLimit-Limit", "many", "RateLimit-Remaining", "5", "RateLimit-Reset", "1")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				next := tc.answer()
				m := lookupAnyMock(t, func(req *http.Request) (*http.Response, error) {
					time.Sleep(latency)
					return next(req)
				})
				c := m.Client(t)
				t0 := time.Now()
				var wg sync.WaitGroup
				for i := range callers {
					wg.Go(func() {
						for range calls {
							assert.NoError(t, callLookupIPAt(callCtx(t), c, i))
						}
					})
				}
				wg.Wait()
				// The first goes as a probe, the others wait for its
				// answer; then all go, or, in slow start, one more for
				// each answer, until all 8 are in flight.
				assert.Equal(t, time.Duration(calls+tc.start)*latency, time.Since(t0), "time taken: no call held but the probe's waiters")
			})
		})
	}
}

// teamRun is a team on one rate limit, in a synctest bubble: clients
// clients of their own (as processes of a team are), with callers
// goroutines each calling LookupIP in a loop, each call with a 10 s
// context, for dur, against one bucket of perSecond and burst that takes
// latency to answer. A failed call's caller waits a tenth of a second
// before the next. hook, when not nil, runs at each answer's arrival, for
// a test that stops clients.
type teamRun struct {
	clients, callers int
	perSecond        float64
	burst            int
	dur, latency     time.Duration
	opts             []synthient.Option
	// active, when not nil, reports whether client i still calls at the
	// time given, from the run's start.
	active func(i int, at time.Duration) bool
	// spent is how many of the bucket's tokens others took just before
	// the run.
	spent int
}

// teamResult is what a teamRun counted.
type teamResult struct {
	successes, failures, requests, throttled int
	// late counts the successes after lateFrom, by client.
	late    []int
	reasons map[retry.StopReason]int
}

// run makes the run; lateFrom is where teamResult.late starts counting.
func (tr teamRun) run(t *testing.T, lateFrom time.Duration) teamResult {
	t.Helper()
	res := teamResult{late: make([]int, tr.clients), reasons: map[retry.StopReason]int{}}
	synctest.Test(t, func(t *testing.T) {
		bk := newRateLimited(tr.perSecond, tr.burst, `{"ip":"203.0.113.7"}`)
		for range tr.spent {
			bk.take(time.Now())
		}
		m := lookupAnyMock(t, func(req *http.Request) (*http.Response, error) {
			time.Sleep(tr.latency / 2)
			resp, err := bk.Respond(req)
			time.Sleep(tr.latency / 2)
			return resp, err
		})
		t0 := time.Now()
		// The run's end cancels the calls in progress; it is no deadline
		// of theirs, which is their own 10 s alone.
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		time.AfterFunc(tr.dur, stop)
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for i := range tr.clients {
			c := m.Client(t, tr.opts...)
			for j := range tr.callers {
				// Each caller its own address: identical calls in
				// flight would share one request.
				addr := i*tr.callers + j
				wg.Go(func() {
					for ctx.Err() == nil && (tr.active == nil || tr.active(i, time.Since(t0))) {
						cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
						err := callLookupIPAt(cctx, c, addr)
						cancel()
						mu.Lock()
						var e *synthient.Error
						switch {
						case err == nil:
							res.successes++
							if time.Since(t0) >= lateFrom {
								res.late[i]++
							}
						case ctx.Err() != nil && errors.Is(err, ctx.Err()):
						default:
							res.failures++
							if errors.As(err, &e) {
								res.reasons[e.StopReason]++
							}
						}
						mu.Unlock()
						if err != nil {
							time.Sleep(100 * time.Millisecond)
						}
					}
				})
			}
		}
		wg.Wait()
		time.Sleep(tr.latency) // the answers of the requests cut short
		res.requests, res.throttled = len(m.Requests()), bk.Throttled()
	})
	return res
}

// TestPacingTeamSharesTheRate: 16 clients of one team, on one bucket of
// 20/s with a burst of 20, each learning of the others only from the
// bucket's answers through the call path, get what it allows between
// them (95% at least), draw few 429s (5% at most) and fail no call. They
// start together, as the processes of a deploy do. The model's own team
// runs, at more setups, are internal/pace's TestTeamSharesTheRate.
func TestPacingTeamSharesTheRate(t *testing.T) {
	t.Parallel()
	tr := teamRun{clients: 16, callers: 4, perSecond: 20, burst: 20, dur: 15 * time.Second, latency: time.Millisecond}
	res := tr.run(t, 0)
	assert.GreaterOrEqual(t, float64(res.successes)/(20+20*15), 0.95, "efficiency")
	assert.LessOrEqual(t, float64(res.throttled)/float64(res.requests), 0.05, "share of requests answered 429")
	assert.Zero(t, res.failures, "failed calls: %v", res.reasons)
}

// TestPacingRecoversAfterContention: once the other clients of the team
// stop, the one left takes the whole rate again within seconds: from 8 s
// on, 95% of what the bucket refills.
func TestPacingRecoversAfterContention(t *testing.T) {
	t.Parallel()
	tr := teamRun{clients: 4, callers: 16, perSecond: 100, burst: 200, dur: 15 * time.Second, latency: time.Millisecond,
		active: func(i int, at time.Duration) bool { return i == 0 || at < 5*time.Second }}
	res := tr.run(t, 8*time.Second)
	assert.GreaterOrEqual(t, float64(res.late[0]), 0.95*100*7, "the client left, from 8 s to 15 s")
	assert.Zero(t, res.failures, "failed calls: %v", res.reasons)
}

// TestPacingStartOnASpentBucket: a client whose first answer shows a
// deficit its own request does not explain (others of the team took 12 of
// the 20 tokens just before) does not spend what is left at once: it
// holds for the team. Once the answers show no one else, it takes the
// whole rate again: from 5 s on, 95% of what the bucket refills.
func TestPacingStartOnASpentBucket(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	tr := teamRun{clients: 1, callers: 8, perSecond: 10, burst: 20, dur: 10 * time.Second, latency: time.Millisecond,
		spent: 12, opts: []synthient.Option{synthient.WithObserver(rec)}}
	res := tr.run(t, 5*time.Second)
	assert.GreaterOrEqual(t, float64(res.late[0]), 0.95*10*5, "from 5 s to 10 s")
	assert.Zero(t, res.failures, "failed calls: %v", res.reasons)
	assert.Zero(t, res.throttled, "429s")
	i := slices.IndexFunc(rec.Events(), func(e event) bool { return e.kind == "Hold" })
	require.GreaterOrEqual(t, i, 0, "a hold")
	assert.True(t, rec.Events()[i].hold.Shared, "the first hold is for the team")
}

// TestPacingLoneClientOnAHalfSpentBucket: a client alone on a bucket an
// earlier process left half spent (its first answer says RateLimit-Limit
// 10, Remaining 5, Reset 20; nobody else spends it) sends its next call
// within 1 s, and then the calls after it at once while the bucket has
// tokens, with no 429.
func TestPacingLoneClientOnAHalfSpentBucket(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bk := newRateLimited(0.25, 10, `{"ip":"203.0.113.7"}`)
		for range 4 {
			bk.take(time.Now())
		}
		m := lookupMock(t, bk.Respond)
		var first *synthient.RateLimit
		c := m.Client(t, synthient.WithResponseHook(func(ri *synthient.ResponseInfo) error {
			if first == nil {
				first = ri.RateLimit
			}
			return nil
		}))
		for range 5 {
			require.NoError(t, callLookupIP(callCtx(t), c))
		}
		require.Equal(t, &synthient.RateLimit{Limit: 10, Remaining: 5, Reset: 20 * time.Second}, first, "the first answer")
		reqs := m.Requests()
		at := since(reqs[0].At, reqs)
		assert.LessOrEqual(t, at[1], time.Second, "the next call")
		assert.Equal(t, []time.Duration{at[1], at[1], at[1]}, at[2:], "the calls after it")
		assert.Zero(t, bk.Throttled(), "429s")
	})
}

// TestPacingSuccessesCorrectTheModel: a server that answers every request
// 200 while its headers say the bucket is spent and refills a token in
// 3.6 s (RateLimit-Limit 1000, Remaining 0, Reset 3600) fails no call on
// the client's own hold: the calls whose turn would come after their
// deadline go, one at a time, and their successes, faster than the rate
// the headers imply, teach the model the rate the server grants.
func TestPacingSuccessesCorrectTheModel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lie := okLookup(1000, 0, 3600)
		m := lookupAnyMock(t, func(req *http.Request) (*http.Response, error) {
			time.Sleep(time.Millisecond)
			return lie(req)
		})
		c := m.Client(t)
		errs := make(chan error, 50)
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() { errs <- callLookupIPAt(callCtx(t), c, i) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		assert.Len(t, m.Requests(), 50, "requests")
	})
}

// TestPacingHoldForTheTeam: a hold longer than the bucket alone asks,
// because other clients were seen to spend it, says so: its PacingHold is
// Shared, and a call it stops, past its deadline while a 429 confirms the
// model, stops with team_share_exceeds_deadline, nothing sent. The
// answers: the bucket holds 19 of 20 after this client's first request,
// 10 after its second: others spent 8 meanwhile.
func TestPacingHoldForTheTeam(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := lookupMock(t, okLookup(20, 19, 1), okLookup(20, 10, 1),
			problem(http.StatusTooManyRequests, append(rateLimitKV(20, 0, 1), "Retry-After", "1")...),
			okLookup(20, 0, 1))
		rec := &recorder{}
		c := m.Client(t, synthient.WithObserver(rec))
		for range 3 {
			require.NoError(t, callLookupIP(callCtx(t), c))
		}
		events := rec.Events()
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		err := callLookupIP(ctx, c)
		require.ErrorIs(t, err, synthient.ErrRateLimitHold)
		_ = requireStop(t, err, 0, retry.TeamShareExceedsDeadline)
		_ = requireConnErr(t, err, true, false)
		assert.Len(t, m.Requests(), 4, "requests: the held call sent none")
		last := rec.Events()[len(events):]
		require.Equal(t, []string{"StartCall", "Hold", "EndCall"}, kinds(last))
		assert.True(t, last[1].hold.Shared, "the hold is for the team")
		assert.Equal(t, retry.TeamShareExceedsDeadline, last[1].hold.Stop)
	})
}
