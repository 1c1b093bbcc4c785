package pace_test

// Tests of Wait and Sleep (wait.go), on fake time: a lone client on a
// bucket another process left half spent, a team that starts together,
// the holds of a shared bucket, and the hot path.

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/pace"
)

// TestLoneClientOnAHalfSpentBucket: a client alone on a bucket another
// process left half spent (RateLimit-Limit 10, Remaining 5, Reset 20 after
// its first request) holds its next call at most 1 s, for the deficit may
// be others' spending now; that call's answer shows the bucket falling by
// this client's requests alone, and the client then spends what is left
// at once, with no 429.
func TestLoneClientOnAHalfSpentBucket(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(0.25, 10)
		srv.spend(4)
		var b pace.Bucket
		var rec holds
		t0 := time.Now()
		first := srv.answer()
		require.Equal(t, answered(10, 5, 20), first, "the first answer")
		b.Answer(b.Go(), first)
		for range 5 {
			tk, _, ok := b.Wait(t.Context(), maxHold, rec.report)
			require.True(t, ok)
			b.Answer(tk, srv.answer())
		}
		at := srv.requests(t0)
		assert.LessOrEqual(t, at[1], time.Second, "the next call")
		assert.Equal(t, []time.Duration{at[1], at[1], at[1], at[1]}, at[2:], "the ones after it: at once")
		assert.Zero(t, srv.throttled, "429s")
		hs := rec.all()
		require.Len(t, hs, 1, "holds")
		assert.True(t, hs[0].Shared, "a hold for the team")
	})
}

// TestLoneClientCallers: eight callers of a lone client on a bucket an
// earlier process left partly spent (12 of 20 taken; 10/s): the calls
// that waited for the answer of the call that goes after 1 s go, once it
// shows nobody else, as slow start lets them, and the bucket answers no
// 429; from 5 s on, the client gets 95% of the refill.
func TestLoneClientCallers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(10, 20)
		srv.spend(12)
		res := team{clients: 1, callers: 8, dur: 10 * time.Second, latency: time.Millisecond}.run(srv, 5*time.Second)
		assert.GreaterOrEqual(t, float64(res.late[0]), 0.95*10*5, "from 5 s to 10 s")
		assert.Zero(t, res.failures, "failed calls")
		assert.Zero(t, srv.throttled, "429s")
	})
}

// TestTeamStartIsHeld: the same first answer, while other clients keep
// spending the bucket: the next call's answer shows them, and the client
// holds for its share from then on.
func TestTeamStartIsHeld(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(20, 20)
		srv.spend(12)
		ctx, stop := context.WithCancel(t.Context())
		var others sync.WaitGroup
		defer others.Wait()
		defer stop()
		others.Go(func() { // 19 a second
			for pace.Sleep(ctx, time.Second/19) == nil {
				srv.spend(1)
			}
		})
		var b pace.Bucket
		b.Answer(b.Go(), srv.answer())
		require.Equal(t, "suspect", b.Snapshot().State)
		var rec holds
		for range 3 {
			tk, _, ok := b.Wait(t.Context(), maxHold, rec.report)
			require.True(t, ok)
			b.Answer(tk, srv.answer())
		}
		s := b.Snapshot()
		assert.Equal(t, "shared", s.State)
		assert.Less(t, s.Share, s.Rate/2, "a share of the rate")
		assert.Len(t, rec.all(), 3, "every call held")
		assert.Zero(t, srv.throttled, "429s")
	})
}

// TestSharedTurnPastDeadline: a turn for the team is a guess, as this
// client's share rises when others' fall. So a call whose turn at its
// share comes after its deadline waits, at most until its deadline, when
// the bucket's whole rate would give it a turn in time; it stops at once
// when not even the whole rate would, with a hold for the team. Both
// while a 429 confirms the model.
func TestSharedTurnPastDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		ok       bool
		after    time.Duration // when it went or stopped
	}{
		{"in time at the whole rate", 200 * time.Millisecond, false, 200 * time.Millisecond},
		{"not even at the whole rate", 10 * time.Millisecond, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b, _ := share20(t)
				b.Answer(b.Go(), throttled(20, 1, 1))
				ctx, cancel := context.WithTimeout(t.Context(), tc.deadline)
				defer cancel()
				w := <-waitAt(ctx, b)
				assert.Equal(t, tc.ok, w.ok, "it goes")
				assert.Equal(t, tc.after, w.after, "after")
				assert.True(t, w.hold.Shared, "a hold for the team")
			})
		})
	}
}

// TestWaitHotPathAllocatesNothing: an attempt of a bucket whose model has
// a token, and its answer, allocate nothing.
//
//nolint:paralleltest // it counts the process's allocations: a parallel test would add its own
func TestWaitHotPathAllocatesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(200, 0, 2)) // exact, 100/s
		time.Sleep(time.Second)
		ctx := context.Background()
		a := answered(200, 100, 1)
		report := func(pace.Hold) { t.Error("a hold") }
		allocs := testing.AllocsPerRun(100, func() {
			time.Sleep(10 * time.Millisecond) // a token back each time
			tk, _, ok := b.Wait(ctx, maxHold, report)
			if !ok {
				t.Fatal("held")
			}
			b.Answer(tk, a)
		})
		assert.Zero(t, allocs)
	})
}

// TestSleep: Sleep waits its time, or returns the context's error when it
// ends first.
func TestSleep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		require.NoError(t, pace.Sleep(t.Context(), time.Second))
		assert.Equal(t, time.Second, time.Since(t0))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		require.ErrorIs(t, pace.Sleep(ctx, time.Minute), context.DeadlineExceeded)
		assert.Equal(t, 2*time.Second, time.Since(t0))
	})
}

// TestWaitReportsTheHeldBucket: while a 429 holds a bucket, an attempt
// reports the hold once and goes when it ends.
func TestWaitReportsTheHeldBucket(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), pace.Answer{Status: http.StatusTooManyRequests, Throttled: true, RetryAfter: 2 * time.Second})
		var rec holds
		t0 := time.Now()
		_, _, ok := b.Wait(t.Context(), maxHold, rec.report)
		require.True(t, ok)
		assert.Equal(t, 2*time.Second, time.Since(t0))
		assert.Equal(t, []pace.Hold{{Wait: 2 * time.Second}}, rec.all())
	})
}
