package synthient

// Tests of the model in pace.go on an explicit clock: what it learns from
// the RateLimit headers, and that its hot path allocates nothing.

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// rlHeader is an answer's RateLimit headers.
func rlHeader(limit, remaining, reset int) http.Header {
	return http.Header{
		"Ratelimit-Limit":     {strconv.Itoa(limit)},
		"Ratelimit-Remaining": {strconv.Itoa(remaining)},
		"Ratelimit-Reset":     {strconv.Itoa(reset)},
	}
}

// TestPaceBucketLearns: the burst is RateLimit-Limit; the rate is the
// largest deficit per second seen, trusted once an answer said the bucket
// was spent; the tokens are brought down to Remaining, and up to it (less
// the attempts in flight) only while the rate is not trusted.
func TestPaceBucketLearns(t *testing.T) {
	t.Parallel()
	type obs struct{ limit, remaining, reset int }
	for _, tc := range []struct {
		name    string
		seen    []obs
		rate    rate.Limit
		trusted bool
		tokens  float64 // at the time of the last answer
	}{
		{"first answer", []obs{{20, 19, 1}}, 1, false, 19},
		{"spent: exact rate", []obs{{20, 0, 1}}, 20, true, 0},
		{"half spent: not trusted yet", []obs{{200, 100, 1}}, 100, false, 100},
		{"partly spent: too low, not trusted", []obs{{20, 2, 1}}, 18, false, 2},
		{"then spent: exact, trusted", []obs{{20, 2, 1}, {20, 0, 1}}, 20, true, 0},
		{"the largest deficit per second wins", []obs{{200, 0, 2}, {200, 199, 1}}, 100, true, 0},
		{"an underestimate is raised", []obs{{200, 50, 2}, {200, 0, 2}}, 100, true, 0},
		{"tokens raised while not trusted", []obs{{20, 5, 1}, {20, 15, 1}}, 15, false, 15},
		{"tokens never raised once trusted", []obs{{20, 0, 1}, {20, 15, 1}}, 20, true, 0},
		{"slow bucket", []obs{{20, 0, 40}}, 0.5, true, 0},
		{"a new limit forgets the rate", []obs{{20, 0, 1}, {40, 39, 1}}, 1, false, 39},
		{"remaining above limit", []obs{{10, 50, 0}}, 0, false, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			var b paceBucket
			for _, o := range tc.seen {
				b.inflight++
				b.answer(now, rlHeader(o.limit, o.remaining, o.reset), b.ended, false, 0)
			}
			assert.Equal(t, tc.rate, b.rate, "rate")
			assert.Equal(t, tc.trusted, b.trusted(), "trusted")
			assert.InDelta(t, tc.tokens, b.lim.TokensAt(now), 1e-9, "tokens")
			assert.Zero(t, b.inflight, "in flight")
		})
	}
}

// TestPaceBucketSteps: what an attempt is told, by the state of the model.
func TestPaceBucketSteps(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	for i := range maxProbes {
		assert.Equal(t, step{sent: true}, b.take(now, true, time.Time{}, time.Minute), "unknown: probe %d goes", i)
	}
	waiting := b.take(now, true, time.Time{}, time.Minute)
	require.NotNil(t, waiting.news, "unknown: the next waits for the probe's answer")
	assert.Equal(t, step{sent: true}, b.take(now, false, time.Time{}, time.Minute), "past the probe wait: it goes")
	for range maxProbes {
		b.release()
	}
	b.answer(now, rlHeader(20, 0, 1), b.ended, false, 0)
	select {
	case <-waiting.news:
	default:
		t.Fatal("the answer did not wake the waiting attempt")
	}
	s := b.take(now, true, time.Time{}, time.Minute)
	assert.True(t, s.sent, "spent, rate known: a reservation")
	assert.Equal(t, 50*time.Millisecond+b.margin(), s.wait, "its wait: one token at 20/s, and the margin")
	b.cancel(s, now)
	assert.InDelta(t, 0, b.lim.TokensAt(now), 1e-9, "the cancelled reservation's token is back")

	b.inflight++
	b.answer(now, http.Header{}, b.ended, true, 2*time.Second)
	assert.True(t, b.unpaced, "an answer without headers: unpaced")
	assert.Equal(t, step{sent: true, ended: b.ended}, b.take(now, true, time.Time{}, time.Minute), "unpaced: at once")
	b.answer(now, rlHeader(20, 0, 1), b.ended, false, 0) // the trusted rate comes back
	b.drained = false                                    // as if it had never been known
	b.inflight++
	b.answer(now, http.Header{}, b.ended, true, 2*time.Second)
	assert.Equal(t, step{wait: 2 * time.Second}, b.take(now, true, time.Time{}, time.Minute), "a 429 without a trusted rate holds the bucket")
}

// TestPaceBucketLateTurnNotReserved: an attempt whose turn would come
// after its deadline reserves nothing, so that the attempts behind it are
// not pushed back (a reservation given back from the middle of the queue
// would leave its turn unused, and callers with short deadlines would
// then push the queue back without end).
func TestPaceBucketLateTurnNotReserved(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	b.inflight++
	b.answer(now, rlHeader(20, 0, 1), b.ended, false, 0) // spent, 20/s
	for range 100 {
		s := b.take(now, true, now.Add(10*time.Millisecond), time.Minute)
		require.True(t, s.late, "a turn 50 ms away, a deadline in 10 ms")
		require.False(t, s.sent)
		assert.Nil(t, s.res)
	}
	assert.InDelta(t, 0, b.lim.TokensAt(now), 1e-9, "nothing reserved")
	s := b.take(now, true, now.Add(time.Second), time.Minute)
	assert.True(t, s.sent)
	assert.Equal(t, 50*time.Millisecond+b.margin(), s.wait, "the next attempt has the first turn")
}

// TestPaceBucketTurnPastMaximum: a turn more than maxHold away goes at
// once, also when the rate is so small that the wait in a Duration would
// overflow.
func TestPaceBucketTurnPastMaximum(t *testing.T) {
	t.Parallel()
	for _, reset := range []int{3600, 9_000_000_000, math.MaxInt} {
		t.Run(strconv.Itoa(reset), func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			var b paceBucket
			b.inflight++
			b.answer(now, rlHeader(1, 0, reset), b.ended, false, 0)
			require.True(t, b.trusted())
			s := b.take(now, true, now.Add(time.Second), time.Minute)
			assert.True(t, s.sent, "it goes")
			assert.Zero(t, s.wait, "at once")
			assert.Nil(t, s.res, "nothing reserved")
		})
	}
}

// TestPaceHotPathAllocatesNothing: taking a token of a bucket that has
// some, and learning from the answer, allocate nothing.
func TestPaceHotPathAllocatesNothing(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	b.inflight++
	b.answer(now, rlHeader(200, 100, 1), b.ended, false, 0)
	h := rlHeader(200, 150, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(10 * time.Millisecond) // one token back each time
		if s := b.take(now, true, time.Time{}, time.Minute); s.wait != 0 || !s.sent {
			t.Fatalf("take = %+v, want a token at once", s)
		}
		b.answer(now, h, b.ended, false, 0)
	})
	assert.Zero(t, allocs, "allocations of a paced attempt with tokens left")
}

// FuzzRateLimitOf: the headers' reader never panics, and what it accepts
// is usable by the model (a positive limit, a reset that is no negative
// Duration) and agrees with parseRateLimit.
func FuzzRateLimitOf(f *testing.F) {
	f.Add("20", "19", "1")
	f.Add("0", "0", "0")
	f.Add(" 200 ", "-1", "99999999999999999999999")
	f.Fuzz(func(t *testing.T, limit, remaining, reset string) {
		h := http.Header{"Ratelimit-Limit": {limit}, "Ratelimit-Remaining": {remaining}, "Ratelimit-Reset": {reset}}
		l, r, s, ok := rateLimitOf(h)
		if !ok {
			return
		}
		want := parseRateLimit(h)
		if l <= 0 || s < 0 || l != want.Limit || r != want.Remaining || s != want.Reset {
			t.Fatalf("rateLimitOf = %d, %d, %v; parseRateLimit = %+v", l, r, s, *want)
		}
	})
}

// TestPaceBucketLateAnswerRaisesNoMore: answers processed in another
// order than the server counted their requests raise the model no higher
// than the server's bucket will be once the attempts in flight land. Four
// probes of a bucket of 20 are counted 19, 18, 17, 16 by the server and
// answered in reverse; 13 attempts go on the first answer, which leaves
// the server 3 tokens.
func TestPaceBucketLateAnswerRaisesNoMore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	probes := make([]step, maxProbes)
	for i := range probes {
		probes[i] = b.take(now, true, time.Time{}, time.Minute)
		require.True(t, probes[i].sent)
	}
	b.answer(now, rlHeader(20, 16, 1), probes[3].ended, false, 0)
	for range 13 {
		require.True(t, b.take(now, true, time.Time{}, time.Minute).sent)
	}
	for i, remaining := range []int{17, 18, 19} {
		b.answer(now, rlHeader(20, remaining, 1), probes[2-i].ended, false, 0)
		assert.LessOrEqual(t, b.lim.TokensAt(now), 3.0, "tokens after the answer %d", remaining)
	}
	assert.InDelta(t, 3, b.lim.TokensAt(now), 1e-9, "tokens: the server's, once the 13 land")
}

// TestRateLimitOf: the three headers, each present and usable, or nothing.
func TestRateLimitOf(t *testing.T) {
	t.Parallel()
	full := rlHeader(20, 5, 1)
	for _, tt := range []struct {
		name string
		drop string // header to drop
		set  [2]string
		ok   bool
	}{
		{name: "all three", ok: true},
		{name: "no limit", drop: "Ratelimit-Limit"},
		{name: "no remaining", drop: "Ratelimit-Remaining"},
		{name: "no reset", drop: "Ratelimit-Reset"},
		{name: "limit 0", set: [2]string{"Ratelimit-Limit", "0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := full.Clone()
			if tt.drop != "" {
				delete(h, tt.drop)
			}
			if tt.set[0] != "" {
				h.Set(tt.set[0], tt.set[1])
			}
			limit, remaining, reset, ok := rateLimitOf(h)
			assert.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, []any{20, 5, time.Second}, []any{limit, remaining, reset})
			}
		})
	}
}
