package feedindex_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/feedindex"
)

// TestLookupAsTheModel adds random rows, in files one after the other,
// and checks every lookup against the model, which reads every row.
func TestLookupAsTheModel(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run("seed="+string(rune('0'+seed)), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 36)) //nolint:gosec // a seeded draw, the same each run: nothing to guess
			maxAge := []time.Duration{0, 12 * time.Hour}[seed%2]
			m := &model{maxAge: maxAge, now: testNow}
			ix, err := feedindex.New(feedindex.WithMaxAge(maxAge), feedindex.WithClock(func() time.Time { return testNow }))
			require.NoError(t, err)
			defer ix.Close()
			hits, misses := 0, 0
			for range 3 {
				px, ja, an := randomRows(r, 40, m)
				addRows(t, ix, synthient.FeedProxies, px)
				addRows(t, ix, synthient.FeedJA4T, ja)
				addRows(t, ix, synthient.FeedAnonymizers, an)
				for _, a := range probes() {
					want := m.lookup(a.WithZone("").Unmap())
					got := ix.Lookup(nil, a)
					assert.Equal(t, want, got, "%s", a)
					hits += len(got)
					misses += len(feedindex.Feeds) - len(got)
				}
			}
			assert.Greater(t, hits, 100)
			assert.Greater(t, misses, 100)
		})
	}
}

//nolint:paralleltest // testing.AllocsPerRun refuses a parallel test
func TestLookupAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a seeded draw, the same each run: nothing to guess
	m := &model{}
	ix, err := feedindex.New()
	require.NoError(t, err)
	defer ix.Close()
	px, ja, an := randomRows(r, 100, m)
	addRows(t, ix, synthient.FeedProxies, px)
	addRows(t, ix, synthient.FeedJA4T, ja)
	addRows(t, ix, synthient.FeedAnonymizers, an)
	dst := make([]feedindex.Hit, 0, len(feedindex.Feeds))
	for _, a := range []netip.Addr{universe[1], universe[4], netip.MustParseAddr("192.0.2.1")} {
		allocs := testing.AllocsPerRun(100, func() { dst = ix.Lookup(dst[:0], a) })
		assert.Zero(t, allocs, "%s", a)
	}
}
