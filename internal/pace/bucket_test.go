package pace_test

// Tests of Bucket's answers (bucket.go): how a suspect model settles.

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/pace"
)

// TestSuspectDecides: a model made suspect by its first answer (Limit 20,
// Remaining 16 after the one attempt it sent: 4/s at least, of which a
// quarter its own) settles at the answer that closes a window from it,
// however short: tokens gone beyond this client's by 1.5 or more, the
// refill at the rate learnt counted, show others (shared); fewer show
// nobody else (guessed, the whole rate, no sight of others); a spent
// bucket is exact either way. An answer to an attempt sent before the
// first settles nothing.
func TestSuspectDecides(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		after   time.Duration
		answer  pace.Answer
		state   string
		sharing bool
	}{
		{"down by this client's attempt", 0, answered(20, 15, 1), "guessed", false},
		{"down by 1 more", 0, answered(20, 14, 1), "guessed", false},
		{"down by 2 more", 0, answered(20, 13, 1), "shared", true},
		{"refilled as the rate says", 500 * time.Millisecond, answered(20, 17, 1), "guessed", false},
		{"refilled less by 2", 500 * time.Millisecond, answered(20, 15, 1), "shared", true},
		{"spent by others", 0, throttled(20, 1, 1), "exact", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var b pace.Bucket
				b.Answer(b.Go(), answered(20, 16, 1))
				require.Equal(t, "suspect", b.Snapshot().State)
				time.Sleep(tc.after)
				b.Answer(b.Go(), tc.answer)
				s := b.Snapshot()
				assert.Equal(t, tc.state, s.State, "state")
				assert.Equal(t, tc.sharing, s.Sharing, "sharing")
				if !tc.sharing {
					assert.InDelta(t, s.Rate, s.Share, 1e-9, "the whole rate")
				}
			})
		})
	}
}

// TestSuspectSpentAlone: a suspect model whose next answer is a 429 that
// the window explains by this client's own attempt (the bucket held 1)
// is exact, at the whole rate, with no sight of others.
func TestSuspectSpentAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 1, 20))
		require.Equal(t, "suspect", b.Snapshot().State)
		b.Answer(b.Go(), throttled(20, 21, 1))
		s := b.Snapshot()
		assert.Equal(t, "exact", s.State)
		assert.False(t, s.Sharing, "sharing")
		assert.InDelta(t, s.Rate, s.Share, 1e-9, "the whole rate")
	})
}

// TestSuspectIgnoresEarlierAttempts: the answer of an attempt sent before
// the one whose answer made the model suspect closes no window.
func TestSuspectIgnoresEarlierAttempts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		early := b.Go()
		b.Answer(b.Go(), answered(20, 16, 1)) // 4 gone, 2 sent
		require.Equal(t, "suspect", b.Snapshot().State)
		b.Answer(early, answered(20, 17, 1))
		assert.Equal(t, "suspect", b.Snapshot().State)
	})
}
