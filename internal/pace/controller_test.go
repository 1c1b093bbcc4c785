package pace_test

// Tests of the share controller (controller.go): the law it follows, its
// bounds, and a team of clients that share one bucket by it.

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/pace"
)

// The controller's constants, as the package comment gives them.
const (
	target   = 0.4
	gainNow  = 2.0
	gainLag  = 3.0
	leak     = 0.3
	fairness = 4.0
)

// relaxed is x after dt seconds of dx/dt = drive - decay*x.
func relaxed(x, decay, drive, dt float64) float64 {
	eq := drive / decay
	return eq + (x-eq)*math.Exp(-decay*dt)
}

// share20 returns a bucket of 20 at 20/s, exact, whose second answer,
// 0.5 s after the first, showed others: the bucket held 2 where it would
// have held 9 after this client's one attempt. Others spent 7 of 8: the
// error is 0.1 - target, 1/8 more for this client's part.
func share20(t *testing.T) (*pace.Bucket, float64) {
	t.Helper()
	b := new(pace.Bucket)
	b.Answer(b.Go(), answered(20, 0, 1))
	time.Sleep(500 * time.Millisecond)
	b.Answer(b.Go(), answered(20, 2, 1))
	s := b.Snapshot()
	require.True(t, s.Sharing)
	e := (0.1 - target) * (1 + fairness/8)
	require.InDelta(t, math.Exp(gainNow*e), s.Share/s.Rate, 1e-9, "the share at the answer: the error at once")
	return b, e
}

// TestShareFollowsTheLaw: the share's logarithm, as a fraction of the
// rate, is gainNow times the error while it drives (errFor, 1 s), plus a
// lag that moves toward gainLag/leak times the error with a rate of leak
// per second, and decays toward 0 once the error stops, at leak while
// others are seen (3 s) and at 1 per second after.
func TestShareFollowsTheLaw(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, e := share20(t)
		fraction := func() float64 { s := b.Snapshot(); return s.Share / s.Rate }

		time.Sleep(500 * time.Millisecond)
		b.Advance()
		lag := relaxed(0, leak, gainLag*e, 0.5)
		assert.InDelta(t, math.Exp(lag+gainNow*e), fraction(), 1e-9, "0.5 s on: the error drives")

		time.Sleep(time.Second)
		b.Advance()
		lag = relaxed(relaxed(lag, leak, gainLag*e, 0.5), leak, 0, 0.5)
		assert.InDelta(t, math.Exp(lag), fraction(), 1e-9, "1.5 s on: the error drove for 0.5 s more, then stopped")

		time.Sleep(3 * time.Second)
		b.Advance()
		require.False(t, b.Snapshot().Sharing)
		lag = relaxed(lag, 1, 0, 3)
		assert.InDelta(t, math.Exp(lag), fraction(), 1e-9, "4.5 s on: nobody else seen, a faster decay")
	})
}

// TestShareSteers: an answer's level of the bucket moves the share at
// once by gainNow times its error, which a client with a larger part of
// the spending feels more when the bucket is below target; the share
// never passes the rate.
func TestShareSteers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		remaining int
		e         float64 // the error: level - target, more below it
	}{
		{"full", 20, 1 - target},
		{"at the target", 8, 0},
		{"below it", 4, (0.2 - target) * (1 + fairness/8)},
		{"spent", 0, -target * (1 + fairness/8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b, e := share20(t)
				time.Sleep(100 * time.Millisecond) // within the window: the part stays 1/8
				b.Answer(b.Go(), answered(20, tc.remaining, 1))
				s := b.Snapshot()
				lag := relaxed(0, leak, gainLag*e, 0.1)
				assert.InDelta(t, math.Exp(min(lag+gainNow*tc.e, 0)), s.Share/s.Rate, 1e-9, "share's fraction of the rate")
			})
		})
	}
}

// TestShareBounds: a share that the error drives down for long stops at
// 1/256 of the rate; a share driven up stops at the rate, which a rate
// known exactly does not pass.
func TestShareBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		remaining int
		fraction  float64
	}{
		{"down", 0, 1.0 / 256},
		{"up", 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b, _ := share20(t)
				for range 20 {
					time.Sleep(100 * time.Millisecond)
					b.Answer(b.Go(), answered(20, tc.remaining, 1))
				}
				s := b.Snapshot()
				assert.InDelta(t, tc.fraction, s.Share/s.Rate, 1e-9, "share's fraction of the rate")
				assert.InDelta(t, 20, s.Rate, 1e-9, "rate")
			})
		})
	}
}

// TestLowerBoundRises: a rate learnt from other clients' spending (shared)
// is a lower bound. While the bucket holds more than the target, the
// share rises, and past the rate it lifts the rate with it.
func TestLowerBoundRises(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 19, 1))
		b.Answer(b.Go(), answered(20, 10, 1)) // others took 8: 10/s at least, 2/10 of it this client's
		s := b.Snapshot()
		require.Equal(t, "shared", s.State)
		require.InDelta(t, 10, s.Rate, 1e-9)
		lag := math.Log(2.0 / 10)
		time.Sleep(500 * time.Millisecond)
		b.Answer(b.Go(), answered(20, 20, 1)) // full
		lag = relaxed(lag, leak, gainLag*(0.5-target), 0.5)
		time.Sleep(time.Second)
		b.Advance()
		lag = relaxed(lag, leak, gainLag*(1-target), 1)
		require.Positive(t, lag, "the lag is past the rate")
		s = b.Snapshot()
		assert.Equal(t, "shared", s.State)
		assert.InDelta(t, 10*math.Exp(lag), s.Rate, 1e-6, "rate lifted")
		assert.InDelta(t, s.Rate, s.Share, 1e-9, "the whole rate")
	})
}

// TestTeamSharesTheRate: clients of one team on one bucket, each learning
// of the others only from its answers, get what the bucket allows between
// them (95% at least), draw few 429s (5% at most) and fail no call. They
// start together, as the processes of a deploy do.
func TestTeamSharesTheRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		clients, callers int
		perSecond        float64
		burst            int
	}{
		{"4 clients at 20/s", 4, 16, 20, 20},
		{"16 clients at 20/s", 16, 4, 20, 20},
		{"4 clients at 100/s", 4, 16, 100, 200},
		{"16 clients at 100/s", 16, 4, 100, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv := newServer(tc.perSecond, tc.burst)
				res := team{clients: tc.clients, callers: tc.callers, dur: 15 * time.Second, latency: time.Millisecond}.run(srv, 0)
				allowed := float64(tc.burst) + tc.perSecond*15
				requests := len(srv.requests(time.Time{}))
				assert.GreaterOrEqual(t, float64(res.successes)/allowed, 0.95, "efficiency")
				assert.LessOrEqual(t, float64(srv.throttled)/float64(requests), 0.05, "share of requests answered 429")
				assert.Zero(t, res.failures, "failed calls")
			})
		})
	}
}

// TestTeamRecovers: once the other clients of a team stop, the one left
// takes the whole rate again within seconds: from 8 s on, 95% of what the
// bucket refills.
func TestTeamRecovers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(100, 200)
		tm := team{clients: 4, callers: 16, dur: 15 * time.Second, latency: time.Millisecond,
			active: func(i int, at time.Duration) bool { return i == 0 || at < 5*time.Second }}
		res := tm.run(srv, 8*time.Second)
		assert.GreaterOrEqual(t, float64(res.late[0]), 0.95*100*7, "the client left, from 8 s to 15 s")
		assert.Zero(t, res.failures, "failed calls")
	})
}
