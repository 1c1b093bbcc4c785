package synthient

// Tests of the model in pacebucket.go on an explicit clock: what it learns from
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
		// A first answer's deficit beyond this client's own request:
		// others spend the bucket, and it takes its part of what is left,
		// none here.
		{"half spent by others", []obs{{200, 100, 1}}, 100, true, 0},
		{"partly spent by others", []obs{{20, 2, 1}}, 18, true, 0},
		{"partly spent: too low, not trusted", []obs{{20, 18, 1}}, 2, false, 18},
		{"then spent: exact, trusted", []obs{{20, 2, 1}, {20, 0, 1}}, 20, true, 0},
		{"the largest deficit per second wins", []obs{{200, 0, 2}, {200, 199, 1}}, 100, true, 0},
		{"an underestimate is raised", []obs{{200, 50, 2}, {200, 0, 2}}, 100, true, 0},
		{"tokens raised while not trusted", []obs{{20, 18, 1}, {20, 19, 1}}, 2, false, 19},
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
				s := b.send(now, step{})
				b.answer(now, 200, rlHeader(o.limit, o.remaining, o.reset), s.ticket, false, 0)
			}
			assert.InDelta(t, float64(tc.rate), float64(b.rate), 1e-9, "rate")
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
	probe := b.take(now, nil, true, time.Time{}, time.Minute)
	assert.True(t, probe.sent, "unknown: the probe goes")
	waiting := b.take(now, nil, true, time.Time{}, time.Minute)
	require.False(t, waiting.sent)
	require.NotNil(t, waiting.wake, "unknown: the next waits for the probe's answer")
	assert.True(t, b.take(now, nil, false, time.Time{}, time.Minute).sent, "past the probe wait: it goes")
	b.release(ticket{})
	b.answer(now, http.StatusOK, rlHeader(20, 0, 1), probe.ticket, false, 0)
	select {
	case <-waiting.wake:
	default:
		t.Fatal("the answer did not wake the waiting attempt")
	}

	first := b.take(now, nil, true, time.Time{}, time.Minute)
	require.False(t, first.sent, "spent, rate known: it waits in the queue")
	assert.True(t, first.hold, "a hold to report")
	assert.InDelta(t, 75*time.Millisecond, first.wait, float64(time.Microsecond), "its turn: one token at 20/s, and half a token's margin")
	assert.Equal(t, first.wait, first.sleep, "the first in the queue sleeps until its turn")
	second := b.take(now, nil, true, time.Time{}, time.Minute)
	assert.InDelta(t, 125*time.Millisecond, second.wait, float64(time.Microsecond), "the second's turn: a token later")
	assert.Zero(t, second.sleep, "the second sleeps until woken")
	again := b.take(now, second.waiter, true, time.Time{}, time.Minute)
	assert.False(t, again.hold, "asked again: no second report of the hold")
	b.abandon(first.waiter)
	select {
	case <-second.wake:
	default:
		t.Fatal("the first leaving did not wake the second")
	}
	gone := b.take(now.Add(first.wait), second.waiter, true, time.Time{}, time.Minute)
	assert.True(t, gone.sent, "the second has the first's turn")
	assert.Empty(t, b.queue)

	b.inflight++
	b.answer(now, http.StatusOK, http.Header{}, ticket{ended: b.ended}, false, 0)
	assert.True(t, b.unpaced, "an answer without headers: unpaced")
	assert.True(t, b.take(now, nil, true, time.Time{}, time.Minute).sent, "unpaced: at once")
	b.answer(now, http.StatusOK, rlHeader(20, 0, 1), ticket{ended: b.ended}, false, 0) // the trusted rate comes back
	b.drained = false                                                                  // as if it had never been known
	b.inflight++
	b.answer(now, http.StatusTooManyRequests, http.Header{}, ticket{ended: b.ended}, true, 2*time.Second)
	held := b.take(now, nil, true, time.Time{}, time.Minute)
	assert.Equal(t, step{wait: 2 * time.Second, hold: true, sleep: 2 * time.Second}, held, "a 429 without a trusted rate holds the bucket")
}

// TestPaceBucketLateTurn: an attempt whose turn would come after its
// deadline takes no place in the queue, so that the attempts behind it are
// not pushed back. While a 429 confirms the model it does not go; before,
// one such attempt at a time goes, to probe a model that may be wrong, and
// the others wait for its answer.
func TestPaceBucketLateTurn(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	b.inflight++
	b.answer(now, http.StatusOK, rlHeader(20, 0, 1), ticket{ended: b.ended}, false, 0) // spent, 20/s
	soon := now.Add(10 * time.Millisecond)
	probe := b.take(now, nil, true, soon, time.Minute)
	require.True(t, probe.sent && probe.ticket.probe, "unconfirmed: a probe goes")
	for range 100 {
		s := b.take(now, nil, true, soon, time.Minute)
		require.False(t, s.sent || s.late, "one probe at a time: the others wait for its answer")
		require.NotNil(t, s.wake)
	}
	b.answer(now, http.StatusTooManyRequests, rlHeader(20, 0, 1), probe.ticket, true, time.Second)
	for range 100 {
		require.True(t, b.take(now, nil, true, soon, time.Minute).late, "confirmed: a turn 50 ms away, a deadline in 10 ms")
	}
	assert.Empty(t, b.queue, "nothing queued")
	s := b.take(now, nil, true, now.Add(time.Second), time.Minute)
	assert.InDelta(t, 125*time.Millisecond, s.wait, float64(time.Microsecond), "the next attempt has the first turn (the 429 left one to the server)")
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
			b.answer(now, 200, rlHeader(1, 0, reset), ticket{ended: b.ended}, false, 0)
			require.True(t, b.trusted())
			s := b.take(now, nil, true, now.Add(time.Second), time.Minute)
			assert.True(t, s.sent, "it goes")
			assert.Zero(t, s.wait, "at once")
			assert.Empty(t, b.queue, "nothing queued")
		})
	}
}

// TestPaceHotPathAllocatesNothing: taking a token of a bucket that has
// some, and learning from the answer, allocate nothing.
//
//nolint:paralleltest // it counts the process's allocations: a parallel test would add its own
func TestPaceHotPathAllocatesNothing(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	b.answer(now, 200, rlHeader(200, 199, 1), b.send(now, step{}).ticket, false, 0)
	h := rlHeader(200, 199, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(10 * time.Millisecond) // one token back each time
		if s := b.take(now, nil, true, time.Time{}, time.Minute); s.wait != 0 || !s.sent {
			t.Fatalf("take = %+v, want a token at once", s)
		}
		b.answer(now, 200, h, ticket{ended: b.ended}, false, 0)
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
// probes of a bucket of 20 (the first one, then three past the probe
// wait) are counted 19, 18, 17, 16 by the server and answered in reverse;
// 13 attempts go on the first answer (slow start done), which leaves the
// server 3 tokens.
func TestPaceBucketLateAnswerRaisesNoMore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	b.slowStart = 100
	probes := make([]step, 4)
	for i := range probes {
		probes[i] = b.take(now, nil, i == 0, time.Time{}, time.Minute)
		require.True(t, probes[i].sent)
	}
	b.answer(now, 200, rlHeader(20, 16, 1), ticket{ended: probes[3].ticket.ended}, false, 0)
	for range 13 {
		require.True(t, b.take(now, nil, true, time.Time{}, time.Minute).sent)
	}
	for i, remaining := range []int{17, 18, 19} {
		b.answer(now, 200, rlHeader(20, remaining, 1), ticket{ended: probes[2-i].ticket.ended}, false, 0)
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

// TestPaceBucketEvidence: successes answered Remaining 0 prove tokens the
// headers did not: three within 10 ms of a bucket whose headers say it
// refills a token each 3.6 s (Limit 1000, Reset 3600) teach the model a
// rate of at least (3-2)/10ms. The same successes at the rate the headers
// say, one each 3.6 s, teach it nothing: the bound never passes the rate
// of a bucket that tells the truth.
func TestPaceBucketEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		gap  time.Duration
		rate rate.Limit // at least
	}{
		{"faster than the headers say", 5 * time.Millisecond, 100},
		{"as the headers say", 3600 * time.Millisecond, 1000.0 / 3600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			var b paceBucket
			for range 3 {
				// A deadline before the model's turn: the attempt goes
				// as a probe of the model, which no 429 confirms.
				s := b.take(now, nil, true, now.Add(time.Millisecond), time.Hour)
				require.True(t, s.sent)
				b.answer(now, http.StatusOK, rlHeader(1000, 0, 3600), s.ticket, false, 0)
				now = now.Add(tc.gap)
			}
			assert.GreaterOrEqual(t, b.rate, tc.rate, "rate")
			assert.LessOrEqual(t, b.rate, max(tc.rate, 1000.0/3600)*1.01, "never more than the successes prove")
		})
	}
}

// TestPaceBucketSeesOthers: a window of answers in which the bucket lost
// more tokens than this client spent shows other clients; while the
// bucket then runs low, share falls below the rate, and the model holds
// no more of the bucket's tokens than its part; windows that show no other
// client bring share back to the rate.
func TestPaceBucketSeesOthers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	// send makes one attempt and gives it the answer remaining after
	// latency; a step that holds is slept through.
	send := func(remaining int) {
		for {
			s := b.take(now, nil, true, time.Time{}, time.Hour)
			if s.sent {
				now = now.Add(time.Millisecond)
				b.answer(now, http.StatusOK, rlHeader(20, remaining, 1), s.ticket, false, 0)
				return
			}
			b.abandon(s.waiter)
			now = now.Add(max(s.wait, time.Millisecond))
		}
	}
	send(0) // spent: 20/s, trusted
	require.True(t, b.trusted())
	for range 10 { // 5 answers a second, each saying the bucket holds 2: others spend what this client leaves
		send(2)
		now = now.Add(200 * time.Millisecond)
	}
	assert.True(t, b.sharing(now), "others seen")
	assert.Less(t, b.share, b.rate, "share of a shared bucket that runs low")
	assert.LessOrEqual(t, b.lim.TokensAt(now), 2.0, "tokens: no more than the bucket's")

	for range 40 { // then the bucket holds what this client leaves: nobody else
		send(15)
		now = now.Add(100 * time.Millisecond)
	}
	assert.False(t, b.sharing(now), "no other client")
	assert.InDelta(t, float64(b.rate), float64(b.share), 0.1*float64(b.rate), "share back to the rate")
}

// TestPaceBucketShareMovesWithTime: a share moves with time, not with
// answers: a client whose small share brings it few answers is lifted
// toward the rate while it hears nothing, so that it is not left behind
// by clients that are answered more often.
func TestPaceBucketShareMovesWithTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var b paceBucket
	answer := func(remaining int) {
		s := b.take(now, nil, true, time.Time{}, time.Hour)
		if !s.sent {
			b.abandon(s.waiter)
			s = b.send(now, step{})
		}
		now = now.Add(time.Millisecond)
		b.answer(now, http.StatusOK, rlHeader(20, remaining, 1), s.ticket, false, 0)
	}
	answer(0)      // spent: 20/s, trusted
	for range 10 { // others spend what this client leaves
		answer(0)
		now = now.Add(200 * time.Millisecond)
	}
	require.True(t, b.sharing(now), "others seen")
	low := b.share
	require.Less(t, low, b.rate, "share below the rate")

	// No answer meanwhile: once the last answer's error no longer drives
	// it (errFor), the share rises.
	b.mu.Lock()
	b.advance(now.Add(errFor + 100*time.Millisecond))
	low = b.share
	b.advance(now.Add(errFor + 2*time.Second))
	lifted := b.share
	b.mu.Unlock()
	assert.Greater(t, lifted, low, "share lifted while no answer came")
	assert.LessOrEqual(t, lifted, b.rate, "never past the rate")
}

// TestPaceBucketUnexpected429: a 429 to an attempt that went on a token
// of the model's says others took it: the model sees other clients. A 429
// to an attempt that went without one (a probe) says nothing of them.
func TestPaceBucketUnexpected429(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		token   bool
		sharing bool
	}{
		{"on a token", true, true},
		{"a probe", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			var b paceBucket
			b.answer(now, 200, rlHeader(20, 0, 1), b.send(now, step{}).ticket, false, 0)
			require.True(t, b.trusted(), "trusted")
			require.False(t, b.sharing(now), "sharing at first")
			now = now.Add(100 * time.Millisecond) // two tokens back
			s := b.take(now, nil, true, time.Time{}, time.Minute)
			require.True(t, s.sent, "sent on a token")
			if !tc.token {
				s.ticket.token, s.ticket.probe = false, true
				b.probing++
			}
			b.answer(now, http.StatusTooManyRequests, rlHeader(20, 0, 1), s.ticket, true, time.Second)
			assert.Equal(t, tc.sharing, b.sharing(now), "sharing")
		})
	}
}
