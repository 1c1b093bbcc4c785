package pace_test

// Tests of the estimate (estimate.go): what the model learns of a bucket's
// burst and rate, its states, and its sight of other clients.

import (
	"context"
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/pace"
)

// unstated is an Answer of a 200 that states no bucket.
var unstated = pace.Answer{Status: http.StatusOK}

// TestStates: each transition of the package comment's table, by the
// answers that make it: the state they leave, the rate and this client's
// share of it, and the tokens of the model. Each answer is to an attempt
// of its own, and no time passes. A client that sees others takes part of
// the deficit, rate × part × e^(2 × (level - 0.4)) at most the rate, and
// of the tokens it gives part × the share's fraction of the rate.
func TestStates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		answers     []pace.Answer
		state       string
		rate, share float64
		tokens      float64
	}{
		{"nothing heard", nil, "unknown", 0, 0, 0},
		{"a first answer: a lower bound", []pace.Answer{answered(20, 19, 1)}, "guessed", 1, 1, 19},
		{"no bucket stated", []pace.Answer{unstated}, "unpaced", 0, 0, 0},
		{"stated after none", []pace.Answer{unstated, answered(20, 19, 1)}, "guessed", 1, 1, 19},
		{"spent: exact", []pace.Answer{answered(20, 0, 1)}, "exact", 20, 20, 0},
		{"spent, then none stated", []pace.Answer{answered(20, 0, 1), unstated}, "unpaced", 20, 20, 0},
		// Remaining less those in flight: 15 tokens, as the rate gives no
		// turns again.
		{"stated again: a lower bound until spent", []pace.Answer{answered(20, 0, 1), unstated, answered(20, 15, 1)}, "guessed", 20, 20, 15},
		// Others took 2 of the 3 tokens gone: a third of 17 tokens, of
		// which the share's fraction then, a third: 1.
		{"the first deficit 2 beyond the attempts sent", []pace.Answer{answered(20, 17, 1)}, "suspect", 3, 3 * math.Exp(math.Log(1.0/3)+2*(0.85-0.4)), 1},
		{"the first deficit 1 beyond", []pace.Answer{answered(20, 18, 1)}, "guessed", 2, 2, 18},
		// Spent: the rate is exact, and there are no tokens to share.
		{"the first deficit beyond, spent", []pace.Answer{answered(20, 0, 2)}, "exact", 10, 10, 0},
		// Grown by 2 while this client sent 1: its part is 2 of the 3
		// tokens gone, 11 of 17, of which two thirds again: 7.
		{"a deficit grown by more than the attempts sent", []pace.Answer{answered(20, 19, 1), answered(20, 17, 1)}, "shared", 3, 3, 7},
		{"a deficit grown by them alone", []pace.Answer{answered(20, 19, 1), answered(20, 18, 1)}, "guessed", 2, 2, 18},
		{"the largest deficit per second wins", []pace.Answer{answered(200, 0, 2), answered(200, 199, 1)}, "exact", 100, 100, 0},
		// The first answer, 49 beyond the attempt sent, makes the part
		// 1/50; the next, spent at once, ends no window but gives a level
		// of 0, which cuts faster the larger the part of the spending.
		{"a rate too low is raised", []pace.Answer{answered(200, 150, 2), answered(200, 0, 2)}, "exact", 100,
			100 * math.Exp(math.Log(1.0/50)-2*0.4*(1+4.0/50)), 0},
		{"tokens raised while guessed", []pace.Answer{answered(20, 18, 1), answered(20, 19, 1)}, "guessed", 2, 2, 19},
		{"tokens never raised once exact", []pace.Answer{answered(20, 0, 1), answered(20, 15, 1)}, "exact", 20, 20, 0},
		{"a slow bucket", []pace.Answer{answered(20, 0, 40)}, "exact", 0.5, 0.5, 0},
		{"a new limit starts afresh", []pace.Answer{answered(20, 0, 1), answered(40, 39, 1)}, "guessed", 1, 1, 39},
		{"Remaining above the limit", []pace.Answer{answered(10, 50, 0)}, "guessed", 0, 0, 10},
		{"Reset 0: no rate", []pace.Answer{answered(20, 0, 0)}, "guessed", 0, 0, 0},
		// The first deficit is the first answer's that has one: 2 beyond
		// the 2 attempts sent. Half the deficit is this client's: the
		// share is the whole rate (½ × e^0.8 > 1), the tokens ½ × ½ × 16.
		{"a full bucket, then a deficit beyond", []pace.Answer{answered(20, 20, 1), answered(20, 16, 1)}, "suspect", 4, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				for _, a := range tc.answers {
					b.Answer(b.Go(), a)
				}
				s := b.Snapshot()
				assert.Equal(t, tc.state, s.State, "state")
				assert.InDelta(t, tc.rate, s.Rate, 1e-9, "rate")
				assert.InDelta(t, tc.share, s.Share, 1e-9, "share")
				assert.InDelta(t, tc.tokens, s.Tokens, 1e-9, "tokens")
				assert.Zero(t, s.InFlight, "in flight")
			})
		})
	}
}

// TestStaleAnswers: answers handled in another order than the server
// counted their requests raise the model no higher than the server's
// bucket: four attempts at a bucket of 20, counted 19, 18, 17 and 16,
// answered in reverse. The first answer leaves out the three in flight;
// each later one, those in flight and those answered meanwhile, which the
// server may have counted after it.
func TestStaleAnswers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		tickets := make([]pace.Ticket, 4)
		for i := range tickets {
			tickets[i] = b.Go()
		}
		for i, want := range []float64{13, 14, 15, 16} {
			b.Answer(tickets[3-i], answered(20, 16+i, 1))
			assert.InDelta(t, want, b.Snapshot().Tokens, 1e-9, "tokens after the answer %d", 16+i)
		}
	})
}

// TestEvidence: successes answered Remaining 0 prove tokens the headers
// did not: three within 10 ms of a bucket whose headers say it refills a
// token each 3.6 s (Limit 1000, Reset 3600) prove a rate of more than
// (3-2)/10ms. The same successes as far apart as the headers say prove
// nothing more, nor do two, nor three at one instant, nor three spread
// over more than the run window. Without a Reset, they alone make the
// rate exact.
func TestEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		n     int
		gap   time.Duration
		reset int
		rate  float64
		state string
	}{
		{"three within 10 ms", 3, 5 * time.Millisecond, 3600, 100, "exact"},
		{"four within 15 ms", 4, 5 * time.Millisecond, 3600, 2 / 0.015, "exact"},
		{"as the headers say", 3, 3600 * time.Millisecond, 3600, 1000.0 / 3600, "exact"},
		{"two", 2, 5 * time.Millisecond, 3600, 1000.0 / 3600, "exact"},
		{"three at one instant", 3, 0, 3600, 1000.0 / 3600, "exact"},
		{"spread over 6 s", 4, 3 * time.Second, 3600, 1000.0 / 3600, "exact"},
		{"without a Reset", 3, 5 * time.Millisecond, 0, 100, "exact"},
		{"two without a Reset", 2, 5 * time.Millisecond, 0, 0, "guessed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				for i := range tc.n {
					if i > 0 {
						time.Sleep(tc.gap)
					}
					b.Answer(b.Go(), answered(1000, 0, tc.reset))
				}
				s := b.Snapshot()
				assert.InDelta(t, tc.rate, s.Rate, 1e-6*tc.rate, "rate")
				assert.Equal(t, tc.state, s.State, "state")
			})
		})
	}
}

// TestEvidenceSpansTheEarliestGoing: the span successes prove a rate
// over runs from the earliest going of one of them, which may be before
// the first answered: three answered 10 ms apart, the third of which went
// 20 ms before the first was answered, prove (3-2) over 40 ms.
func TestEvidenceSpansTheEarliestGoing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		early := b.Go()
		time.Sleep(20 * time.Millisecond)
		b.Answer(b.Go(), answered(1000, 0, 3600))
		time.Sleep(10 * time.Millisecond)
		b.Answer(b.Go(), answered(1000, 0, 3600))
		time.Sleep(10 * time.Millisecond)
		b.Answer(early, answered(1000, 0, 3600))
		assert.InDelta(t, 25, b.Snapshot().Rate, 1e-6, "rate: 1 over 40 ms")
	})
}

// TestSeesOthers: a window of answers in which the bucket lost more
// tokens than this client spent shows other clients; while the bucket
// then runs low, the share falls below the rate, and the model holds no
// more of the bucket's tokens than its part; windows that show nobody
// else end the sight at once, and the share comes back to the rate.
func TestSeesOthers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 0, 1)) // spent: 20/s, exact
		require.False(t, b.Snapshot().Sharing, "nobody else at first")
		for range 10 { // 5 answers a second, each saying the bucket holds 2
			time.Sleep(200 * time.Millisecond)
			b.Answer(b.Go(), answered(20, 2, 1))
		}
		s := b.Snapshot()
		require.True(t, s.Sharing, "others seen")
		assert.Less(t, s.Share, s.Rate, "share of a shared bucket that runs low")
		assert.LessOrEqual(t, s.Tokens, 2.0, "tokens: no more than the bucket's")

		time.Sleep(time.Second) // the bucket refills in the meantime
		b.Answer(b.Go(), answered(20, 19, 1))
		assert.False(t, b.Snapshot().Sharing, "a window with nobody else ends the sight")
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			b.Answer(b.Go(), answered(20, 19, 1))
		}
		s = b.Snapshot()
		assert.Equal(t, "exact", s.State)
		assert.InDelta(t, s.Rate, s.Share, 0.05*s.Rate, "share back to the rate")
	})
}

// TestWindows: what one window of answers says of other clients, from an
// answer saying a bucket of 20 at 20/s holds 10, by the time it spans and
// what its last answer says: tokens gone beyond this client's two
// attempts by 1.5 or more are others'; a window shorter than the time the
// bucket takes to refill half its burst (0.5 s) ends none; and a refill
// past the burst is lost.
func TestWindows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		span      time.Duration
		remaining int
		sharing   bool
	}{
		{"others took 2 in 0.5 s", 500 * time.Millisecond, 16, true},
		{"others took 1 in 0.5 s", 500 * time.Millisecond, 17, false},
		{"nobody else in 0.5 s", 500 * time.Millisecond, 18, false},
		{"too short a window", 400 * time.Millisecond, 0, false},
		// 10 + 12, less the 2 sent: full, 20, without others.
		{"a bucket just full", 600 * time.Millisecond, 18, true},
		// 10 + 20 would be 28 after the two: full, 20, it holds 18 at most.
		{"others took 2, past the burst", time.Second, 16, true},
		{"nobody else, past the burst", time.Second, 18, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				b.Answer(b.Go(), answered(20, 0, 1)) // exact
				time.Sleep(500 * time.Millisecond)
				b.Answer(b.Go(), answered(20, 10, 1)) // as refilled: the window's start
				require.False(t, b.Snapshot().Sharing)
				time.Sleep(tc.span)
				b.Go()
				b.Answer(b.Go(), answered(20, tc.remaining, 1))
				assert.Equal(t, tc.sharing, b.Snapshot().Sharing, "sharing")
			})
		})
	}
}

// TestUnexpected429: a 429 to an attempt that went on a token of a model
// that gives turns (at once, or on its turn) says that another client
// took it: the model sees others. A 429 to an attempt that went without
// one (a probe) says nothing of them.
func TestUnexpected429(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		wait    time.Duration // before the attempt
		token   bool
		sharing bool
	}{
		{"on a token", 100 * time.Millisecond, true, true},
		{"on its turn", 0, true, true},
		{"without one", 100 * time.Millisecond, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				b.Answer(b.Go(), answered(20, 0, 1))
				time.Sleep(tc.wait)
				tk := b.Go()
				if tc.token {
					var ok bool
					tk, _, ok = b.Wait(context.Background(), maxHold, noReport)
					require.True(t, ok)
				}
				b.Answer(tk, throttled(20, 1, 1))
				assert.Equal(t, tc.sharing, b.Snapshot().Sharing, "sharing")
			})
		})
	}
}

// TestSightLasts: a sight of others lasts othersFor (3 s) with no new
// one; then the next answer drops a rate learnt from them (shared) back
// to guessed, and an exact one stays exact, its share back to the whole
// rate in seconds.
func TestSightLasts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		first pace.Answer
		state string
	}{
		{"a rate learnt from others", answered(20, 19, 1), "guessed"},
		{"an exact rate", answered(20, 0, 1), "exact"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				b.Answer(b.Go(), tc.first)
				time.Sleep(500 * time.Millisecond)
				b.Answer(b.Go(), answered(20, 5, 1)) // others took 13 or more
				require.True(t, b.Snapshot().Sharing, "others seen")
				time.Sleep(3 * time.Second)
				require.True(t, b.Snapshot().Sharing, "still, after 3 s")
				time.Sleep(time.Millisecond)
				require.False(t, b.Snapshot().Sharing, "no more, after 3 s")
				full := pace.Answer{Status: http.StatusBadGateway, Limit: 20, Remaining: 20}
				b.Answer(b.Go(), full)
				assert.Equal(t, tc.state, b.Snapshot().State)
				if tc.state == "exact" {
					time.Sleep(5 * time.Second)
					b.Answer(b.Go(), full)
					s := b.Snapshot()
					assert.InDelta(t, 1, s.Share/s.Rate, 0.01, "the share's fraction of the rate")
				}
			})
		})
	}
}

// TestEvidenceRunWindow: successes compared are those within the run
// window (5 s) of the earliest going of one: three that went together,
// answered at once and 5 s later, prove a rate over 5 s; 5 ms more, and
// the run starts again.
func TestEvidenceRunWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after time.Duration
		rate  float64
	}{
		{"within", 5 * time.Second, 1.0 / 5},
		{"past", 5*time.Second + 5*time.Millisecond, 1000.0 / 36000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				tickets := []pace.Ticket{b.Go(), b.Go(), b.Go()}
				b.Answer(tickets[0], answered(1000, 0, 36000))
				time.Sleep(tc.after)
				b.Answer(tickets[1], answered(1000, 0, 36000))
				b.Answer(tickets[2], answered(1000, 0, 36000))
				assert.InDelta(t, tc.rate, b.Snapshot().Rate, 1e-9, "rate")
			})
		})
	}
}

// TestWindowSlack: 1.5 tokens beyond this client's, exactly, are others':
// a bucket of 20 at 2/s, spent, that 1.25 s later (2.5 tokens of refill)
// is spent again after this client's one attempt.
func TestWindowSlack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 0, 10))
		time.Sleep(1250 * time.Millisecond)
		b.Answer(b.Go(), answered(20, 0, 10))
		assert.True(t, b.Snapshot().Sharing)
	})
}

// TestWindowsEndTheSight: a window in which the bucket lost no more than
// this client spent ends a sight of others at once; one in which it lost
// a token more (less than 1.5) leaves it as it was.
func TestWindowsEndTheSight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		remaining int
		sharing   bool
	}{
		{"nobody else", 9, false},
		{"a token more", 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				b.Answer(b.Go(), answered(20, 0, 1))
				time.Sleep(500 * time.Millisecond)
				b.Answer(b.Go(), answered(20, 0, 1)) // 10 refilled, 9 others'
				require.True(t, b.Snapshot().Sharing)
				time.Sleep(500 * time.Millisecond)
				b.Answer(b.Go(), answered(20, tc.remaining, 1)) // 10 refilled, 1 this client's
				assert.Equal(t, tc.sharing, b.Snapshot().Sharing)
			})
		})
	}
}
