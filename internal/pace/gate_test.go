package pace_test

// Tests of the gate (gate.go): probes, slow start, the queue and its
// turns, and holds after a 429, through Wait, on fake time.

import (
	"context"
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/pace"
)

// waitAt makes an attempt of b wait, on a goroutine of its own, and
// returns when it went (from now) and its ticket, once it did.
func waitAt(ctx context.Context, b *pace.Bucket) <-chan wentAt {
	t0 := time.Now()
	ch := make(chan wentAt, 1)
	go func() {
		tk, h, ok := b.Wait(ctx, maxHold, noReport)
		ch <- wentAt{after: time.Since(t0), ticket: tk, hold: h, ok: ok}
	}()
	return ch
}

// wentAt is what waitAt saw.
type wentAt struct {
	after  time.Duration
	ticket pace.Ticket
	hold   pace.Hold
	ok     bool
}

// TestProbe: while nothing is known of a bucket, one attempt goes, as a
// probe, and the others wait for its answer: at most 1 s, or until it
// fails without one. Then they go, the model allowing.
func TestProbe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(b *pace.Bucket, probe pace.Ticket) // what happens to the probe, after 300 ms
		want time.Duration                           // when the second attempt goes
	}{
		{"answered", func(b *pace.Bucket, p pace.Ticket) { b.Answer(p, answered(20, 19, 1)) }, 300 * time.Millisecond},
		{"failed", func(b *pace.Bucket, p pace.Ticket) { b.Release(p) }, 300 * time.Millisecond},
		{"no answer", func(*pace.Bucket, pace.Ticket) {}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				probe, _, ok := b.Wait(t.Context(), maxHold, noReport)
				require.True(t, ok, "the probe goes")
				second := waitAt(t.Context(), &b)
				time.Sleep(300 * time.Millisecond)
				tc.end(&b, probe)
				w := <-second
				require.True(t, w.ok)
				assert.Equal(t, tc.want, w.after, "the second goes")
			})
		})
	}
}

// TestProbeWaitsForEachAnswer: an attempt waiting for news waits at most
// 1 s for each: answers every 0.8 s keep it waiting while a probe is in
// flight and the model has no token for it.
func TestProbeWaitsForEachAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		probe := b.Go()
		b.Go() // one more in flight: no slow start for the waiter
		waiter := waitAt(t.Context(), &b)
		time.Sleep(800 * time.Millisecond)
		b.Answer(probe, answered(20, 2, 1)) // the two left go to those in flight
		w := <-waiter
		require.True(t, w.ok)
		assert.Equal(t, 1800*time.Millisecond, w.after, "a second after the answer")
	})
}

// TestSlowStart: while the rate gives no turns, one more attempt may be
// in flight for each success, from two after the first: eight callers,
// 20 calls each, answered in 100 ms by a bucket that never runs low, take
// 23 answers' time: the probe's, one more in flight at the second (2),
// and at the third (4), all 8 from the fourth.
func TestSlowStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(200, 400)
		var b pace.Bucket
		t0 := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 20 {
					_, _, ok := send(t.Context(), &b, srv, 100*time.Millisecond)
					assert.True(t, ok)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, 23*100*time.Millisecond, time.Since(t0), "time taken")
		assert.Zero(t, srv.throttled)
	})
}

// TestSlowStartCounts: the attempts in flight while the rate gives no
// turns: one, the probe; two after its success; four after theirs.
func TestSlowStartCounts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(200, 400)
		var b pace.Bucket
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for ctx.Err() == nil {
					send(ctx, &b, srv, 100*time.Millisecond)
				}
			})
		}
		for _, want := range []int{1, 2, 4, 8} {
			time.Sleep(50 * time.Millisecond)
			synctest.Wait()
			assert.Equal(t, want, b.Snapshot().InFlight, "in flight")
			time.Sleep(50 * time.Millisecond)
		}
		stop()
		wg.Wait()
	})
}

// TestTurns: once the rate gives turns and the model has no token, an
// attempt waits in a queue, first in, first out: its turn comes when the
// model holds a token for it and every attempt before it, and half a
// token more. Each reports its hold once, at its first step.
func TestTurns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 0, 1)) // spent, 20/s
		rec := [3]holds{}
		type went struct {
			i  int
			at time.Duration
		}
		order := make(chan went, 3)
		t0 := time.Now()
		for i := range 3 {
			go func() {
				_, _, ok := b.Wait(t.Context(), maxHold, rec[i].report)
				assert.True(t, ok)
				order <- went{i, time.Since(t0)}
			}()
			synctest.Wait() // each in the queue before the next
		}
		for i, want := range []time.Duration{75 * time.Millisecond, 125 * time.Millisecond, 175 * time.Millisecond} {
			w := <-order
			assert.Equal(t, went{i, want}, w, "the attempt to go %d-th", i)
			assert.Equal(t, []pace.Hold{{Wait: want}}, rec[i].all(), "holds reported")
		}
	})
}

// TestCancelGivesBackTheTurn: an attempt whose context ends during its
// hold leaves the queue at once, reporting ctx's error, and the next one
// takes its turn.
func TestCancelGivesBackTheTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 0, 2)) // spent, 10/s
		ctx, cancel := context.WithCancel(t.Context())
		first := waitAt(ctx, &b)
		synctest.Wait()
		second := waitAt(t.Context(), &b)
		time.Sleep(50 * time.Millisecond)
		cancel()
		w := <-first
		require.False(t, w.ok)
		assert.Equal(t, pace.Hold{Wait: 150 * time.Millisecond, Err: context.Canceled}, w.hold)
		assert.Equal(t, 50*time.Millisecond, w.after, "left at once")
		w = <-second
		require.True(t, w.ok)
		assert.Equal(t, 150*time.Millisecond, w.after, "the second has the first's turn")
		assert.Zero(t, b.Snapshot().Queued)
	})
}

// TestTurnPastMaxHold: a turn more than maxHold away at the bucket's
// whole rate is not waited for, also when the rate is so small that the
// wait would overflow a Duration: the attempt goes at once.
func TestTurnPastMaxHold(t *testing.T) {
	t.Parallel()
	for _, reset := range []time.Duration{time.Hour, math.MaxInt64} {
		t.Run(reset.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				b.Answer(b.Go(), pace.Answer{Status: http.StatusOK, Limit: 1, Reset: reset})
				require.Equal(t, "exact", b.Snapshot().State)
				w := <-waitAt(t.Context(), &b)
				assert.True(t, w.ok, "it goes")
				assert.Zero(t, w.after, "at once")
				assert.Zero(t, b.Snapshot().Queued, "nothing queued")
			})
		})
	}
}

// TestTurnPastMaxHoldTakesNoToken: an attempt that goes as its turn is
// past maxHold goes on no token of the model's: a 429 to it shows no
// other client.
func TestTurnPastMaxHoldTakesNoToken(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(1, 0, 3600))
		w := <-waitAt(t.Context(), &b)
		require.True(t, w.ok)
		b.Answer(w.ticket, throttled(1, 3600, 1))
		assert.False(t, b.Snapshot().Sharing, "others seen")
	})
}

// TestTurnAtMaxHold: a turn maxHold away is waited for: a token of a
// bucket of 1 that refills one in 32 s.
func TestTurnAtMaxHold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(1, 0, 32))
		t0 := time.Now()
		_, _, ok := b.Wait(t.Context(), 32*time.Second, noReport)
		require.True(t, ok)
		assert.Equal(t, 32*time.Second, time.Since(t0))
	})
}

// TestHeldBy429: a 429 with a Retry-After of a bucket whose rate gives no
// turns holds every attempt until then, and stops one whose deadline
// comes first; with a rate that gives turns, it takes the model's tokens
// and one more turn, left to the server.
func TestHeldBy429(t *testing.T) {
	t.Parallel()
	t.Run("no turns", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			var b pace.Bucket
			b.Answer(b.Go(), answered(20, 19, 1))
			b.Answer(b.Go(), throttled(20, 0, 3))
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			w := <-waitAt(ctx, &b)
			assert.False(t, w.ok)
			assert.Equal(t, pace.Hold{Wait: 3 * time.Second}, w.hold, "a hold past the deadline")
			assert.Zero(t, w.after, "stopped at once")
			w = <-waitAt(t.Context(), &b)
			assert.True(t, w.ok)
			assert.Equal(t, 3*time.Second, w.after, "held for the Retry-After")
		})
	})
	t.Run("turns", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			var b pace.Bucket
			b.Answer(b.Go(), answered(20, 0, 1)) // 20/s
			b.Answer(b.Go(), throttled(20, 1, 1))
			w := <-waitAt(t.Context(), &b)
			assert.True(t, w.ok)
			assert.Equal(t, 125*time.Millisecond, w.after, "a token, one for the server, and half a token")
		})
	})
}

// TestLateTurn: an attempt whose turn would come after its deadline
// takes no place in the queue, so that those behind it are not pushed
// back. While a 429 confirms the model it stops at once; before, one such
// attempt at a time goes, to probe a model that may be wrong, and the
// others wait for its answer. A shared model that heard nothing for more
// than a second is not confirmed by an older 429.
func TestLateTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 0, 1)) // spent, 20/s
		soon, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		probe := <-waitAt(soon, &b)
		require.True(t, probe.ok, "unconfirmed: a probe goes")
		waiting := waitAt(soon, &b)
		synctest.Wait()
		select {
		case <-waiting:
			t.Fatal("a second probe went")
		default:
		}
		b.Answer(probe.ticket, throttled(20, 1, 1))
		w := <-waiting
		require.False(t, w.ok, "confirmed: it stops")
		assert.Equal(t, pace.Hold{Wait: 125 * time.Millisecond}, w.hold)
		assert.Zero(t, b.Snapshot().Queued, "nothing queued")
		w = <-waitAt(t.Context(), &b)
		assert.True(t, w.ok)
		assert.Equal(t, 125*time.Millisecond, w.after, "the next has the first turn, after the server's")
	})
}

// TestStaleConfirmation: a model of a bucket others share is not
// confirmed by a 429 once it heard nothing for a second: an attempt whose
// turn is past its deadline then goes as a probe.
func TestStaleConfirmation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		quiet time.Duration
		goes  bool
	}{
		{"answered a second ago", time.Second, false},
		{"answered longer ago", time.Second + time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b, _ := share20(t)
				for range 10 { // the share falls to its least
					time.Sleep(100 * time.Millisecond)
					b.Answer(b.Go(), throttled(20, 1, 1))
				}
				require.True(t, b.Snapshot().Sharing)
				time.Sleep(tc.quiet)
				ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
				defer cancel()
				w := <-waitAt(ctx, b)
				assert.Equal(t, tc.goes, w.ok, "it goes")
				if !w.ok {
					assert.True(t, w.hold.Shared, "a hold for the team")
				}
			})
		})
	}
}

// TestUnpacedGoes: attempts of a bucket whose last answer stated none go
// at once, concurrent ones too, however spent it was.
func TestUnpacedGoes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 0, 100))
		b.Answer(b.Go(), unstated)
		t0 := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, _, ok := b.Wait(t.Context(), maxHold, noReport)
				assert.True(t, ok)
			})
		}
		wg.Wait()
		assert.Zero(t, time.Since(t0))
		assert.Equal(t, 8, b.Snapshot().InFlight)
	})
}
