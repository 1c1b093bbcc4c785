package synthienttest_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// A pinned answer is what LookupIP and LookupIPs return for its address,
// as given, billed as any lookup; other addresses keep their made-up
// answers, and a second pin of an address replaces the first.
func TestWithIPLookup(t *testing.T) {
	t.Parallel()
	pinned := netip.MustParseAddr("203.0.113.59")
	want := synthient.IPLookup{IP: pinned, Intelligence: &synthient.Intelligence{RiskScore: 59,
		Categories: []string{"COMMERCIAL_VPN"}, Behavior: []string{}, Devices: []synthient.Device{}, Providers: []synthient.Provider{}}}
	srv, _ := newServer(t,
		synthienttest.WithIPLookup(synthient.IPLookup{IP: pinned}), // replaced by the next
		synthienttest.WithIPLookup(want))
	plain, _ := newServer(t)
	c, pc := newClient(t, srv), newClient(t, plain)
	ctx := context.Background()

	got, err := c.LookupIP(ctx, pinned)
	require.NoError(t, err)
	assert.Equal(t, &want, got, "LookupIP")
	batch, err := c.LookupIPs(ctx, []netip.Addr{testIP, pinned})
	require.NoError(t, err)
	assert.Equal(t, want, batch[1], "LookupIPs")
	other, err := pc.LookupIP(ctx, testIP)
	require.NoError(t, err)
	assert.Equal(t, *other, batch[0], "an address not pinned keeps its answer")

	assert.Equal(t, int64(synthienttest.DefaultCredits-3), srv.Credits(srv.APIKey), "credits: 1 + ceil(0.9*2)")
	assert.Equal(t, []netip.Addr{pinned, testIP, pinned}, srv.ChargedIPs(), "the addresses charged, in order")
}

// A pinned domain answers LookupDomain in any case and with a final dot,
// its recent events cut to the limit asked for.
func TestWithDomainLookup(t *testing.T) {
	t.Parallel()
	events := make([]synthient.DomainEvent, 60)
	for i := range events {
		events[i] = synthient.DomainEvent{Port: 1000 + i}
	}
	pin := synthient.DomainLookup{Domain: "pinned.example", Status: "active", RecentEvents: events}
	srv, _ := newServer(t, synthienttest.WithDomainLookup(pin))
	c := newClient(t, srv)
	for _, tt := range []struct {
		name   string
		limit  int
		events int
	}{{"pinned.example", 0, 50}, {"PINNED.example.", 5, 5}, {"pinned.example", 1000, 60}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.LookupDomain(context.Background(), tt.name, &synthient.DomainLookupParams{Limit: tt.limit})
			require.NoError(t, err)
			assert.Equal(t, "active", got.Status)
			assert.Len(t, got.RecentEvents, tt.events)
		})
	}
	assert.Panics(t, func() { synthienttest.NewServer(synthienttest.WithDomainLookup(synthient.DomainLookup{})) })
	assert.Panics(t, func() { synthienttest.NewServer(synthienttest.WithIPLookup(synthient.IPLookup{})) })
}

// WithSeed changes the made-up answers and stream events, the same for the
// same seed; seed 0 is the default data.
func TestWithSeed(t *testing.T) {
	t.Parallel()
	lookups := func(opts ...synthienttest.Option) ([]synthient.IPLookup, *synthient.DomainLookup, []synthient.ProxyEvent) {
		srv, _ := newServer(t, opts...)
		c := newClient(t, srv)
		ctx := context.Background()
		ls, err := c.LookupIPs(ctx, testAddrs(50))
		require.NoError(t, err)
		d, err := c.LookupDomain(ctx, "example.com", nil)
		require.NoError(t, err)
		var evs []synthient.ProxyEvent
		for ev, err := range c.StreamProxies(ctx) {
			require.NoError(t, err)
			if evs = append(evs, ev); len(evs) == 3 {
				break
			}
		}
		return ls, d, evs
	}
	def, defDomain, defEvents := lookups()
	zero, zeroDomain, zeroEvents := lookups(synthienttest.WithSeed(0))
	seven, sevenDomain, sevenEvents := lookups(synthienttest.WithSeed(7))
	again, againDomain, againEvents := lookups(synthienttest.WithSeed(7))
	assert.Equal(t, def, zero, "seed 0 is the default")
	assert.Equal(t, defDomain, zeroDomain)
	assert.Equal(t, defEvents, zeroEvents)
	assert.Equal(t, seven, again, "the same seed, the same answers")
	assert.Equal(t, sevenDomain, againDomain)
	assert.Equal(t, sevenEvents, againEvents)
	assert.NotEqual(t, def, seven, "another seed, other answers")
	assert.NotEqual(t, defDomain, sevenDomain)
	assert.NotEqual(t, defEvents, sevenEvents)
}

// testAddrs returns n public addresses of distinct networks.
func testAddrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{81, byte(i + 1), 69, 142})
	}
	return out
}

// WithLatency holds every answer of the API: a call whose deadline is
// shorter times out, one that waits gets its answer, and the storage
// host is not held.
func TestWithLatency(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithLatency(time.Hour))
	c := newClient(t, srv, synthient.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Account(ctx)
	require.Error(t, err, "an answer held an hour came within 50ms")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, slices.ContainsFunc(srv.Requests(), func(r synthienttest.Request) bool { return r.Route == synthienttest.RouteAccount }), "the request arrived")

	quick, _ := newServer(t, synthienttest.WithLatency(10*time.Millisecond))
	_, err = newClient(t, quick).Account(context.Background())
	require.NoError(t, err)
	assert.Panics(t, func() { synthienttest.NewServer(synthienttest.WithLatency(-time.Second)) })
}
