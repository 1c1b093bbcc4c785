package synthienttest_test

import (
	"context"
	"encoding/json"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

func TestStreamWireFormat(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Hour), synthienttest.WithHeartbeat(10*time.Millisecond))
	resp, br := openRaw(t, rawClient(t), srv, "helio/https") //nolint:bodyclose // openRaw closes it at Cleanup
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "application/x-ndjson", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "20", resp.Header.Get("RateLimit-Limit"))
	first, err := br.ReadString('\n')
	require.NoError(t, err)
	var ev struct {
		Details json.RawMessage `json:"details"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &ev))
	assert.Equal(t, byte('"'), ev.Details[0], "details is a JSON string: %s", ev.Details)
	// Then only heartbeats: the next event is an hour away.
	for range 3 {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "\n", line, "heartbeat line")
	}
}

func TestStreamEndsAfterMaxEvents(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond), synthienttest.WithMaxEvents(5))
	n := 0
	for _, err := range newClient(t, srv).StreamProxies(context.Background()) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 5, n, "events before the cap")
	require.Eventually(t, func() bool { return srv.OpenStreams() == 0 }, hang, 5*time.Millisecond, "the stream is closed")
}

// TestStreamEndsAfterLifetime: a stream of no cap, whose events come every
// 10 ms, ends cleanly at its lifetime: the loop ends, without an error
// (or, if the lifetime did not end it, at the watchdog's deadline, with
// one).
func TestStreamEndsAfterLifetime(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithEventInterval(10*time.Millisecond), synthienttest.WithStreamLifetime(150*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	n := 0
	for _, err := range newClient(t, srv).StreamTorrents(ctx) {
		require.NoError(t, err, "a clean close is no error")
		n++
	}
	assert.Positive(t, n, "events before the end")
	wait, ok := synthient.ReconnectDelay(nil)
	assert.True(t, ok, "a clean close is worth reconnecting")
	assert.Zero(t, wait, "at once")
	require.Eventually(t, func() bool { return srv.OpenStreams() == 0 }, hang, 5*time.Millisecond, "the stream is closed")
}

//nolint:paralleltest // on real time (a delay against a timeout): it runs alone, not beside the parallel tests
func TestStreamStopsWhenClientLeaves(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond))
	c := newClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	for _, err := range c.StreamHoneypotDNS(ctx) {
		if err != nil {
			last = err
			break
		}
		n++
		if n == 1 {
			assert.Equal(t, 1, srv.OpenStreams(), "open streams")
		}
		if n == 10 {
			cancel()
		}
	}
	// The SDK yields nothing it read before it saw the cancel.
	require.ErrorIs(t, last, context.Canceled, "after %d events", n)
	assert.Equal(t, 10, n, "events")
	require.Eventually(t, func() bool { return srv.OpenStreams() == 0 }, hang, 5*time.Millisecond, "the server sees the client leave")
}

func TestStreamConcurrencyLimit(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithEventInterval(5*time.Millisecond))
	c := newClient(t, srv)
	// Bounded: with a wrong limit the third stream would open and run on.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	next1, stop1 := iter.Pull2(c.StreamProxies(ctx))
	defer stop1()
	next2, stop2 := iter.Pull2(c.StreamJA4T(ctx))
	defer stop2()
	_, err, ok := next1()
	require.True(t, ok)
	require.NoError(t, err, "first stream")
	_, err, ok = next2()
	require.True(t, ok)
	require.NoError(t, err, "second stream")
	assert.Equal(t, 2, srv.OpenStreams())

	// A third stream of the same key: 429 without Retry-After.
	hc := rawClient(t)
	hc.Timeout = 10 * time.Second
	r := do(t, hc, "GET", srv.URL+"/feeds/torrents/stream", srv.APIKey, "")
	p := problemOf(t, r, 429)
	assert.Empty(t, r.Header.Values("Retry-After"), "Retry-After on the concurrent-stream 429")
	assert.Contains(t, p.Detail, "concurrent")
	assert.NotEmpty(t, r.Header.Get("RateLimit-Limit"), "RateLimit headers")

	// The SDK returns it at once, without retrying.
	srv.Reset()
	_, err = take(c.StreamAnonymizers(ctx), 1)
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 429, apiErr.Status)
	assert.Nil(t, apiErr.RetryAfter)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStream), "arrivals")
	_, ok = synthient.ReconnectDelay(err)
	assert.True(t, ok, "a 429 is worth reconnecting later")

	// Another key has its own allowance.
	other := srv.AddKey([]string{synthienttest.StreamScope(synthient.FeedTorrents)}, 0)
	_, err = take(newClientKey(t, srv, other).StreamTorrents(ctx), 1)
	require.NoError(t, err, "another key's stream")

	stop1()
	require.Eventually(t, func() bool { return srv.OpenStreams() == 1 }, hang, 5*time.Millisecond, "a stream slot frees")
	_, err = take(c.StreamAnonymizers(ctx), 1)
	require.NoError(t, err, "a stream after one closed")
}

//nolint:paralleltest // on real time (a delay against a timeout): it runs alone, not beside the parallel tests
func TestCloseEndsStreams(t *testing.T) {
	srv := synthienttest.NewServer(synthienttest.WithEventInterval(time.Hour), synthienttest.WithHeartbeat(time.Hour))
	c := newClient(t, srv)
	done := make(chan error, 1)
	got := make(chan struct{})
	go func() {
		var last error
		for _, err := range c.StreamProxies(context.Background()) {
			if err != nil {
				last = err
				break
			}
			close(got)
		}
		done <- last
	}()
	<-got
	srv.Close() // the next event is an hour away: only Close ends the stream
	select {
	case err := <-done:
		// The fake cuts the connection: the client sees the chunked body
		// end early.
		if err != nil {
			require.ErrorAs(t, err, new(*synthient.ConnectionError))
		}
	case <-time.After(hang):
		t.Fatal("the stream did not end after Close")
	}
}

//nolint:paralleltest // on real time (a delay against a timeout): it runs alone, not beside the parallel tests
func TestStreamHeartbeatsKeepItAlive(t *testing.T) {
	ctx := context.Background()
	// Events every 400 ms, heartbeats every 25 ms: a client that times out
	// reads after 250 ms reads on.
	srv, _ := newServer(t, synthienttest.WithEventInterval(400*time.Millisecond),
		synthienttest.WithHeartbeat(25*time.Millisecond), synthienttest.WithMaxEvents(3))
	evs, err := take(newClient(t, srv, synthient.WithTimeout(250*time.Millisecond)).StreamHoneypotDNS(ctx), 10)
	require.NoError(t, err, "a stream with heartbeats")
	assert.Len(t, evs, 3)

	// Without heartbeats the same client times out after the first event.
	quiet, _ := newServer(t, synthienttest.WithEventInterval(time.Hour))
	evs, err = take(newClient(t, quiet, synthient.WithTimeout(250*time.Millisecond)).StreamHoneypotDNS(ctx), 10)
	assert.Len(t, evs, 1)
	require.ErrorAs(t, err, new(*synthient.TimeoutError))
	assert.Equal(t, 1, quiet.Arrivals(synthienttest.RouteStream), "arrivals: a read failure is not retried")
}
