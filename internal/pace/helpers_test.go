package pace_test

// The harness of the package's tests: a server's token bucket that
// answers as the API does, and clients that call it through a Bucket, in
// testing/synctest bubbles, where time is fake: a test sleeps through
// seconds at once and reads, with time.Now, when each attempt went.

import (
	"context"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/synthient-go/synthient/internal/pace"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// maxHold is the longest hold the tests' attempts take (the client's
// MaxRetryAfter, by default).
const maxHold = time.Minute

// server is the API's token bucket of burst that refills at perSecond: it
// answers each request 200, or 429 with a Retry-After when it has no
// token, with the RateLimit headers.
type server struct {
	mu        sync.Mutex
	lim       *rate.Limiter
	burst     int
	arrivals  []time.Time // of every request
	throttled int         // requests answered 429
}

// newServer returns a full bucket.
func newServer(perSecond float64, burst int) *server {
	return &server{lim: rate.NewLimiter(rate.Limit(perSecond), burst), burst: burst}
}

// spend takes n tokens, as other clients do.
func (s *server) spend(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.AllowN(time.Now(), n)
}

// answer counts a request now and answers it.
func (s *server) answer() pace.Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.arrivals = append(s.arrivals, now)
	ok := s.lim.AllowN(now, 1)
	tokens := s.lim.TokensAt(now)
	perSecond := float64(s.lim.Limit())
	a := pace.Answer{
		Status: http.StatusOK, Limit: s.burst, Remaining: int(tokens),
		Reset: seconds(math.Ceil((float64(s.burst) - tokens) / perSecond)),
	}
	if !ok {
		s.throttled++
		a.Status, a.Throttled = http.StatusTooManyRequests, true
		a.RetryAfter = seconds(max(1, math.Ceil((1-tokens)/perSecond)))
	}
	return a
}

// requests returns the arrival of each request so far, after t0.
func (s *server) requests(t0 time.Time) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Duration, len(s.arrivals))
	for i, at := range s.arrivals {
		out[i] = at.Sub(t0)
	}
	return out
}

// seconds returns n seconds as a Duration.
func seconds(n float64) time.Duration {
	return time.Duration(n * float64(time.Second))
}

// answered is an Answer of a 200 that says remaining of limit, full again
// in reset seconds.
func answered(limit, remaining, reset int) pace.Answer {
	return pace.Answer{Status: http.StatusOK, Limit: limit, Remaining: remaining, Reset: seconds(float64(reset))}
}

// throttled is an Answer of a 429 with a Retry-After of retryAfter
// seconds that says the bucket of limit is spent, full in reset seconds.
func throttled(limit, reset, retryAfter int) pace.Answer {
	return pace.Answer{
		Status: http.StatusTooManyRequests, Limit: limit, Reset: seconds(float64(reset)),
		Throttled: true, RetryAfter: seconds(float64(retryAfter)),
	}
}

// holds records the holds a Bucket reports.
type holds struct {
	mu   sync.Mutex
	list []pace.Hold
}

// report is the report function of Wait.
func (h *holds) report(hold pace.Hold) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, hold)
}

// all returns the holds reported so far.
func (h *holds) all() []pace.Hold {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]pace.Hold(nil), h.list...)
}

// noReport is a report function that ignores holds.
func noReport(pace.Hold) {}

// send makes one attempt through b to srv, with latency between the
// attempt's going and its answer (the server counting it halfway), and
// returns the answer; ok is false when b did not let it go.
func send(ctx context.Context, b *pace.Bucket, srv *server, latency time.Duration) (pace.Answer, pace.Hold, bool) {
	t, h, ok := b.Wait(ctx, maxHold, noReport)
	if !ok {
		return pace.Answer{}, h, false
	}
	time.Sleep(latency / 2)
	a := srv.answer()
	time.Sleep(latency / 2)
	b.Answer(t, a)
	return a, h, true
}

// team is a run of clients, each a Bucket of its own, with callers
// goroutines each that call in a loop for dur against one server: a call
// has 10 s, and a 429 is sent again after its Retry-After, as the client
// does. active, when not nil, tells whether client i still calls at the
// time given, from the run's start.
type team struct {
	clients, callers int
	dur, latency     time.Duration
	active           func(i int, at time.Duration) bool
}

// teamResult is what a team run counted: calls that succeeded, failed,
// and the successes from a time on, by client.
type teamResult struct {
	successes, failures int
	late                []int
}

// run makes the run against srv in the calling bubble; lateFrom is where
// teamResult.late starts counting. The run's end cancels the calls in
// progress, which count neither as successes nor as failures.
func (tm team) run(srv *server, lateFrom time.Duration) teamResult {
	res := teamResult{late: make([]int, tm.clients)}
	t0 := time.Now()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	time.AfterFunc(tm.dur, stop)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for i := range tm.clients {
		b := new(pace.Bucket)
		for range tm.callers {
			wg.Go(func() {
				for ctx.Err() == nil && (tm.active == nil || tm.active(i, time.Since(t0))) {
					ok := tm.call(ctx, b, srv)
					mu.Lock()
					switch {
					case ok && time.Since(t0) >= lateFrom:
						res.late[i]++
						fallthrough
					case ok:
						res.successes++
					case ctx.Err() == nil:
						res.failures++
					}
					mu.Unlock()
					if !ok {
						time.Sleep(100 * time.Millisecond)
					}
				}
			})
		}
	}
	wg.Wait()
	return res
}

// call makes one call of 10 s within ctx through b: it sends until an
// answer is not a 429, waiting out each Retry-After, and reports a
// success.
func (tm team) call(ctx context.Context, b *pace.Bucket, srv *server) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		a, _, ok := send(ctx, b, srv, tm.latency)
		switch {
		case !ok:
			return false
		case a.Status != http.StatusTooManyRequests:
			return true
		case pace.Sleep(ctx, a.RetryAfter) != nil:
			return false
		}
	}
}
