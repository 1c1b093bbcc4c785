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
// quarter its own) settles at the answer that closes a window from it, a
// second long (the time the bucket takes to refill half its burst at the
// rate learnt, 1 s at most): the bucket, 20 at most by then, holding 1.5
// tokens or more less than this client's attempt leaves shows others
// (shared); holding more shows nobody else (guessed, the whole rate, no
// sight of others); a spent bucket is exact either way. A shorter window
// settles nothing: others may not have spent anything yet.
func TestSuspectDecides(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		after   time.Duration
		answer  pace.Answer
		state   string
		sharing bool
	}{
		{"full but for this client's attempt", time.Second, answered(20, 19, 1), "guessed", false},
		{"a token less", time.Second, answered(20, 18, 1), "guessed", false},
		{"two less", time.Second, answered(20, 17, 1), "shared", true},
		{"half spent", time.Second, answered(20, 10, 1), "shared", true},
		{"spent", time.Second, throttled(20, 1, 1), "exact", true},
		{"a short window", 100 * time.Millisecond, answered(20, 15, 1), "suspect", true},
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

// TestSuspectSpentAlone: a suspect model whose next answer, a second on,
// is a 429 that the window explains by this client's own attempt (the
// bucket held 1, and refilled less than half a token) is exact, at the
// whole rate, with no sight of others.
func TestSuspectSpentAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b pace.Bucket
		b.Answer(b.Go(), answered(20, 1, 40))
		require.Equal(t, "suspect", b.Snapshot().State)
		time.Sleep(time.Second)
		b.Answer(b.Go(), throttled(20, 42, 1))
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
