package feedindex_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/feedindex"
	"github.com/synthient-go/synthient/synthienttest"
)

// recorder keeps a follower's events and lets a test wait for one.
type recorder struct {
	mu     sync.Mutex
	events []feedindex.FollowEvent
	more   chan struct{}
	status func() []feedindex.FeedStatus // the follower's Status, once made
}

func newRecorder() *recorder { return &recorder{more: make(chan struct{}, 1)} }

func (r *recorder) record(ev feedindex.FollowEvent) {
	if r.status != nil {
		r.status() // the event function may call Status
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

// waitFor waits for the n-th event (from 1) that match reports, and
// returns it; the test fails if the follower does not send it within a
// minute (a guard against a hang, not a measure).
func (r *recorder) waitFor(t *testing.T, n int, what string, match func(feedindex.FollowEvent) bool) feedindex.FollowEvent {
	t.Helper()
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for {
		r.mu.Lock()
		seen := 0
		for _, ev := range r.events {
			if match(ev) {
				if seen++; seen == n {
					r.mu.Unlock()
					return ev
				}
			}
		}
		r.mu.Unlock()
		select {
		case <-r.more:
		case <-guard.C:
			t.Fatalf("no %s after a minute", what)
		}
	}
}

func kind(k feedindex.FollowEventKind) func(feedindex.FollowEvent) bool {
	return func(ev feedindex.FollowEvent) bool { return ev.Kind == k }
}

func exportAdded(id string) func(feedindex.FollowEvent) bool {
	return func(ev feedindex.FollowEvent) bool { return ev.Kind == feedindex.ExportAdded && ev.Export == id }
}

// followFake starts a fake on clock and a follower of feeds on an empty
// index; the follower runs until the test ends, or until the returned
// function stops it and returns what Run returned.
func followFake(t *testing.T, clock *synthienttest.ManualClock, feeds []synthient.Feed, srvOpts ...synthienttest.Option) (*synthienttest.Server, *feedindex.Index, *feedindex.Follower, *recorder, func() error) {
	t.Helper()
	srv := synthienttest.NewServer(append([]synthienttest.Option{synthienttest.WithClock(clock.Now), synthienttest.WithoutRateLimits(),
		synthienttest.WithEventInterval(2 * time.Millisecond), synthienttest.WithStreamLimit(len(feeds))}, srvOpts...)...)
	t.Cleanup(srv.Close)
	c, err := srv.NewClient(synthient.WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ix, err := feedindex.New(feedindex.WithClock(clock.Now))
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	rec := newRecorder()
	fl, err := feedindex.NewFollower(c, ix, feedindex.WithFollowFeeds(feeds...),
		feedindex.WithPollInterval(5*time.Millisecond), feedindex.WithFlushInterval(2*time.Millisecond),
		feedindex.WithReconnectDelay(func(err error) (time.Duration, bool) {
			_, ok := synthient.ReconnectDelay(err) // stop where the API's recipe stops, without its waits
			return 0, ok
		}),
		feedindex.WithDownloadDir(t.TempDir()), feedindex.WithFollowEvents(rec.record))
	require.NoError(t, err)
	rec.status = fl.Status
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fl.Run(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { _ = stop() })
	return srv, ix, fl, rec, stop
}

// exportRows downloads and reads the proxies export id of srv.
func exportRows(t *testing.T, srv *synthienttest.Server, id string) []exports.ProxyRow {
	t.Helper()
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	path := filepath.Join(t.TempDir(), "proxies.parquet")
	_, err = c.DownloadExportFile(context.Background(), synthient.FeedProxies, id, path, nil)
	require.NoError(t, err)
	var rows []exports.ProxyRow
	for r, err := range openExport(t, path).Proxies() {
		require.NoError(t, err)
		rows = append(rows, r)
	}
	require.NotEmpty(t, rows)
	return rows
}

// TestFollowerClosesAGapWithTheNextExport cuts a stream after its first
// event: the gap stays open, poll after poll, until the export of its
// hour is listed, and is then closed by adding that export.
func TestFollowerClosesAGapWithTheNextExport(t *testing.T) {
	t.Parallel()
	clock := synthienttest.NewManualClock(testNow)
	srv, ix, fl, rec, stop := followFake(t, clock, []synthient.Feed{synthient.FeedProxies})
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	credits := srv.Credits(srv.APIKey)

	rec.waitFor(t, 1, "the newest hourly export", exportAdded("2026-06-10/13"))
	ended := rec.waitFor(t, 1, "the cut", kind(feedindex.StreamEnded))
	require.Error(t, ended.Err)
	// The gap of the start, and the gap of the cut, once the stream is
	// open again.
	rec.waitFor(t, 2, "the gap of the cut", kind(feedindex.GapOpened))
	listings := srv.Arrivals(synthienttest.RouteExports)
	for srv.Arrivals(synthienttest.RouteExports) < listings+3 {
		rec.waitFor(t, 1, "an event", func(feedindex.FollowEvent) bool { return true })
		time.Sleep(time.Millisecond) // let the polls go on
	}
	st := fl.Status()[0]
	require.Len(t, st.Gaps, 2, "no export covers 14:00 to 15:00 yet: the gaps stay open")
	for _, g := range st.Gaps {
		assert.Equal(t, testNow, g.From)
		assert.Equal(t, testNow, g.To)
	}
	assert.Positive(t, st.Reconnects)

	// 16:05: the export of 14:00 is listed, and the newest is that of
	// 15:00: the follower adds both.
	clock.Advance(time.Hour + 45*time.Minute)
	rec.waitFor(t, 1, "the export of the gap's hour", exportAdded("2026-06-10/14"))
	rec.waitFor(t, 2, "the gaps closed", kind(feedindex.GapClosed))
	require.ErrorIs(t, stop(), context.Canceled)
	st = fl.Status()[0]
	assert.Empty(t, st.Gaps)
	assert.Equal(t, []string{"2026-06-10/13", "2026-06-10/14", "2026-06-10/15"}, st.Exports)

	for _, r := range exportRows(t, srv, "2026-06-10/14")[:200] {
		hits := ix.Lookup(nil, mustAddr(r.IP))
		require.NotEmpty(t, hits, r.IP)
		assert.False(t, hits[0].LastSeen.Before(time.Unix(r.Timestamp, 0)), r.IP)
	}
	stats := ix.Stats().Feeds[0]
	assert.Equal(t, clock.Now(), stats.Updated, "the stream's events, of 16:05, were added")
	assert.Equal(t, credits, srv.Credits(srv.APIKey), "following spends no credit")
}

// TestFollowerReconnects has the fake close each stream after 3 events:
// every reconnect opens a gap, and the export of their hour closes them
// all.
func TestFollowerReconnects(t *testing.T) {
	t.Parallel()
	clock := synthienttest.NewManualClock(testNow)
	_, _, fl, rec, stop := followFake(t, clock, []synthient.Feed{synthient.FeedAnonymizers}, synthienttest.WithMaxEvents(3))
	rec.waitFor(t, 4, "the fourth stream", kind(feedindex.StreamOpened))
	st := fl.Status()[0]
	assert.GreaterOrEqual(t, st.Reconnects, int64(3))
	assert.GreaterOrEqual(t, len(st.Gaps), 3)
	clock.Advance(time.Hour)
	rec.waitFor(t, 1, "the export of 14:00", exportAdded("2026-06-10/14"))
	n := len(fl.Status()[0].Gaps)
	require.ErrorIs(t, stop(), context.Canceled)
	// Gaps that reach 15:20 wait for the export of 15:00; every gap
	// within 14:00 to 15:00 closed.
	for _, g := range fl.Status()[0].Gaps {
		assert.False(t, !g.To.IsZero() && g.To.Before(testNow.Add(time.Hour)), "a gap of 14:00 left open: %+v", g)
	}
	assert.LessOrEqual(t, len(fl.Status()[0].Gaps), n)
}

// TestFollowerStopsOnAForbiddenStream ends Run with the 403 of a stream
// the key may not open.
func TestFollowerStopsOnAForbiddenStream(t *testing.T) {
	t.Parallel()
	clock := synthienttest.NewManualClock(testNow)
	srv := synthienttest.NewServer(synthienttest.WithClock(clock.Now), synthienttest.WithoutRateLimits())
	defer srv.Close()
	srv.Inject(synthienttest.RouteStream, -1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: http.StatusForbidden})
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	ix, err := feedindex.New()
	require.NoError(t, err)
	defer ix.Close()
	fl, err := feedindex.NewFollower(c, ix, feedindex.WithFollowFeeds(synthient.FeedJA4T), feedindex.WithDownloadDir(t.TempDir()))
	require.NoError(t, err)
	err = fl.Run(context.Background())
	var ae *synthient.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusForbidden, ae.Status)
}

// TestFollowerReloadRacesReaders looks addresses up from many goroutines
// while a follower merges events and adds exports: an address once found
// is found by every later lookup (nothing expires here), and -race sees
// the readers and the writer share nothing unguarded.
func TestFollowerReloadRacesReaders(t *testing.T) {
	t.Parallel()
	clock := synthienttest.NewManualClock(testNow)
	srv, ix, _, rec, stop := followFake(t, clock, feedindex.Feeds)
	want := exportRows(t, srv, "2026-06-10/13")
	var found, lookups atomic.Int64
	readers := make(chan error, 4)
	ctx, cancel := context.WithCancel(context.Background())
	for g := range 4 {
		go func() {
			seen := map[string]bool{}
			dst := make([]feedindex.Hit, 0, 3)
			for i := g; ctx.Err() == nil; i++ {
				r := want[i%len(want)]
				dst = ix.Lookup(dst[:0], mustAddr(r.IP))
				lookups.Add(1)
				if len(dst) > 0 {
					if !seen[r.IP] {
						found.Add(1)
					}
					seen[r.IP] = true
				} else if seen[r.IP] {
					readers <- errors.New(r.IP + " was found, then not")
					return
				}
			}
			readers <- nil
		}()
	}
	rec.waitFor(t, 1, "the export of 13:00", exportAdded("2026-06-10/13"))
	clock.Advance(time.Hour)
	for _, feed := range feedindex.Feeds {
		rec.waitFor(t, 1, "the export of 14:00", func(ev feedindex.FollowEvent) bool {
			return ev.Kind == feedindex.ExportAdded && ev.Feed == feed && ev.Export == "2026-06-10/14"
		})
	}
	rec.waitFor(t, 3, "events merged", kind(feedindex.EventsAdded))
	cancel()
	for range 4 {
		require.NoError(t, <-readers)
	}
	require.ErrorIs(t, stop(), context.Canceled)
	assert.Positive(t, found.Load())
	t.Logf("%d lookups during the follow", lookups.Load())
}
