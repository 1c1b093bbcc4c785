package synthient_test

// Tests of coalesce.go: identical billed lookups in flight share one
// request. They run in synctest bubbles on a mocked transport whose answer
// waits for the test's word (a gate): synctest.Wait returns once every
// caller is blocked, so each has joined the flight (or sent its own
// request) before the answer comes, with no timing to go wrong.

import (
	"context"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// gated returns a responder that answers with next once open is closed,
// or fails when the request's context ends first.
func gated(open <-chan struct{}, next httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		select {
		case <-open:
			return next(req)
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

// sampleAnswer is the 200 of LookupIP(sampleIP) with a full answer.
var sampleAnswer = answerJSON(http.StatusOK, `{"ip":"203.0.113.7","network":{"asn":64500,"isp":"Example","type":"RESIDENTIAL","org":null,"domain":"example.net","abuse_email":null,"abuse_phone":null},`+
	`"location":{"country":"DE","state":"BE","city":"Berlin","timezone":"Europe/Berlin","latitude":52.52,"longitude":13.405,"geo_hash":"u33"},`+
	`"intelligence":{"risk_score":81,"behavior":["PROGRAMMATIC_TRAFFIC"],"categories":[],"devices":[{"os":"Android","version":"13","last_seen":1781049600}],"providers":[]}}`)

// TestCoalescingOneRequest: 32 goroutines looking up one address at once
// send one request, charged once, and each gets a whole answer of its own
// (changing one does not change another's); calls for other addresses, and
// a call after the answer, send their own.
func TestCoalescingOneRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ctx  func(t *testing.T) context.Context
	}{
		// A leader that can never leave sends on its own goroutine.
		{"contexts without an end", func(*testing.T) context.Context { return context.Background() }},
		{"contexts with deadlines", func(t *testing.T) context.Context { return callCtx(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				open := make(chan struct{})
				m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(open, sampleAnswer)).
					Route(http.MethodGet, "/api/v4/lookup/ip/198.51.100.1", answerJSON(http.StatusOK, `{"ip":"198.51.100.1"}`))
				rec := &recorder{}
				c := m.Client(t, synthient.WithObserver(rec))
				const callers = 32
				got := make([]*synthient.IPLookup, callers)
				var wg sync.WaitGroup
				for i := range callers {
					wg.Go(func() {
						var err error
						got[i], err = c.LookupIP(tc.ctx(t), sampleIP)
						assert.NoError(t, err)
					})
				}
				synctest.Wait() // every caller has joined the flight
				other, err := c.LookupIP(tc.ctx(t), netip.MustParseAddr("198.51.100.1"))
				require.NoError(t, err, "another address is not held by the flight")
				assert.Equal(t, "198.51.100.1", other.IP.String())
				close(open)
				wg.Wait()

				assert.Len(t, m.Requests(), 2, "one request for the 32 calls, one for the other address")
				for i, l := range got {
					require.NotNil(t, l, "caller %d", i)
					assert.Equal(t, got[0], l, "caller %d: the same answer", i)
					assert.Zero(t, l.CachedAt, "caller %d: a fresh answer", i)
				}
				got[1].Network.ISP, got[1].Intelligence.Behavior[0] = "changed", "changed"
				assert.Equal(t, "Example", got[0].Network.ISP, "each caller's answer is its own")
				assert.Equal(t, "PROGRAMMATIC_TRAFFIC", got[2].Intelligence.Behavior[0], "each caller's answer is its own")

				ends := of(rec.Events(), "EndCall")
				require.Len(t, ends, callers+1)
				coalesced, attempts, saved := 0, 0, 0
				for _, e := range ends {
					if e.callEnd.Coalesced {
						coalesced++
						assert.Zero(t, e.callEnd.Attempts, "a call that shared a request sent none")
					}
					attempts += e.callEnd.Attempts
					saved += e.callEnd.CreditsSaved
				}
				assert.Equal(t, callers-1, coalesced, "calls that shared the request")
				assert.Equal(t, callers-1, saved, "credits saved")
				assert.Equal(t, 2, attempts, "requests in all")

				_, err = c.LookupIP(tc.ctx(t), sampleIP)
				require.NoError(t, err)
				assert.Len(t, m.Requests(), 3, "once answered, the next call sends its own (no cache)")
			})
		})
	}
}

// TestCoalescingDomain: identical LookupDomain calls share a request; a
// different Limit is a different lookup.
func TestCoalescingDomain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		body := `{"domain":"example.org","status":"active","recent_events":[{"timestamp":1,"port":443}]}`
		m := newMockAPI(t, nil).Route(http.MethodGet, "/api/v4/lookup/domain/example.org", gated(open, answerJSON(http.StatusOK, body)))
		c := m.Client(t)
		var wg sync.WaitGroup
		results := make([]*synthient.DomainLookup, 6)
		for i := range results {
			wg.Go(func() {
				p := &synthient.DomainLookupParams{Limit: 10 * (i % 2)} // 0 and 10
				var err error
				results[i], err = c.LookupDomain(callCtx(t), "example.org", p)
				assert.NoError(t, err)
			})
		}
		synctest.Wait()
		close(open)
		wg.Wait()
		assert.Len(t, m.Requests(), 2, "one request per Limit")
		results[0].RecentEvents[0].Port = 1
		assert.Equal(t, 443, results[2].RecentEvents[0].Port, "each caller's answer is its own")
	})
}

// TestCoalescingErrorsShared: a failure of the shared request is every
// caller's, and nothing is kept of it: the next call sends again.
func TestCoalescingErrorsShared(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(open, problem(http.StatusServiceUnavailable)), sampleAnswer)
		c := m.Client(t)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = c.LookupIP(callCtx(t), sampleIP) })
		}
		synctest.Wait()
		close(open)
		wg.Wait()
		for _, err := range errs {
			_ = requireAPIErr(t, err, http.StatusServiceUnavailable)
		}
		require.Len(t, m.Requests(), 1, "a billed 503 is not sent again")
		_, err := c.LookupIP(callCtx(t), sampleIP)
		require.NoError(t, err)
		assert.Len(t, m.Requests(), 2)
	})
}

// TestCoalescingCancelOneCaller: a caller whose context ends leaves at
// once with its context's error, its request going on for the others,
// whether it is the one that sent it or one that shared it; when every
// caller has left, the request is cancelled, and the last one gets the
// error a lone caller would (the request was written: it may have been
// processed).
func TestCoalescingCancelOneCaller(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cancel []int // the callers whose context is cancelled, in order
	}{
		{"the sender leaves", []int{0}},
		{"a caller that shared leaves", []int{2}},
		{"all but one leave", []int{0, 1, 3}},
		{"all leave", []int{1, 0, 3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				open := make(chan struct{})
				m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(open, sampleAnswer))
				rec := &recorder{}
				c := m.Client(t, synthient.WithObserver(rec))
				const callers = 4
				cancels := make([]context.CancelFunc, callers)
				errs := make([]error, callers)
				got := make([]*synthient.IPLookup, callers)
				var wg sync.WaitGroup
				for i := range callers {
					ctx, cancel := context.WithCancel(callCtx(t))
					cancels[i] = cancel
					wg.Go(func() { got[i], errs[i] = c.LookupIP(ctx, sampleIP) })
					synctest.Wait() // caller 0 sends, in that order
				}
				for _, i := range tc.cancel {
					cancels[i]()
					synctest.Wait()
				}
				close(open)
				wg.Wait()
				synctest.Wait() // the flight ends a leader's call that left after the callers go
				for _, cancel := range cancels {
					cancel()
				}

				require.Len(t, m.Requests(), 1, "one request")
				left := map[int]bool{}
				for _, i := range tc.cancel {
					left[i] = true
				}
				for i := range callers {
					if !left[i] {
						require.NoError(t, errs[i], "caller %d stayed", i)
						assert.Equal(t, sampleIP, got[i].IP)
						continue
					}
					require.ErrorIs(t, errs[i], context.Canceled, "caller %d", i)
					if len(tc.cancel) == callers && i == tc.cancel[callers-1] {
						// The last to leave cancelled the request, written.
						_ = requireConnErr(t, errs[i], false, false)
						_ = requireStop(t, errs[i], 1, retry.ContextDone)
						continue
					}
					_ = requireStop(t, errs[i], 0, retry.ContextDone)
				}
				// Every call is reported whole: the sender's requests before
				// its end, also when it left first.
				events := rec.Events()
				byCall := map[int64][]event{}
				for _, e := range events {
					byCall[e.call] = append(byCall[e.call], e)
				}
				require.Len(t, byCall, callers)
				requests := 0
				for _, evs := range byCall {
					requests += requireOneCall(t, evs).Attempts
				}
				assert.Equal(t, 1, requests, "the request is reported once, in the sender's call")
			})
		})
	}
}

// TestCoalescingDeadlines: each caller keeps its own deadline. The sender's
// passing first does not fail the others: the request goes on with the
// latest deadline, and pacing plans for it.
func TestCoalescingDeadlines(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, func(req *http.Request) (*http.Response, error) {
			time.Sleep(5 * time.Second) // the API is slow
			return sampleAnswer(req)
		})
		c := m.Client(t)
		short, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		long, cancel2 := context.WithTimeout(t.Context(), time.Minute)
		defer cancel2()
		var errShort, errLong error
		var wg sync.WaitGroup
		wg.Go(func() { _, errShort = c.LookupIP(short, sampleIP) })
		synctest.Wait()
		wg.Go(func() { _, errLong = c.LookupIP(long, sampleIP) })
		wg.Wait()
		require.ErrorIs(t, errShort, context.DeadlineExceeded)
		_ = requireStop(t, errShort, 0, retry.ContextDone)
		require.NoError(t, errLong, "the later deadline is the request's")
		assert.Len(t, m.Requests(), 1)
	})
}

// TestCoalescingLastDeadline: when the last caller's deadline passes, the
// request is cancelled with it, and the error says so, as for a lone
// caller.
func TestCoalescingLastDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(make(chan struct{}), sampleAnswer))
		c := m.Client(t)
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for i := range errs {
			ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i+1)*time.Second)
			defer cancel()
			wg.Go(func() { _, errs[i] = c.LookupIP(ctx, sampleIP) })
			synctest.Wait()
		}
		wg.Wait()
		for i, err := range errs {
			require.ErrorIs(t, err, context.DeadlineExceeded, "caller %d", i)
		}
		_ = requireConnErr(t, errs[2], false, false)
		assert.Len(t, m.Requests(), 1)
	})
}

// TestCoalescingMappedAddress: a call for an IPv4-mapped address shares
// the request of one for the IPv4 address it maps, and each gets the
// address as it gave it.
func TestCoalescingMappedAddress(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(open, sampleAnswer))
		c := m.Client(t)
		addrs := []netip.Addr{sampleIP, netip.AddrFrom16(sampleIP.As16())}
		got := make([]*synthient.IPLookup, len(addrs))
		var wg sync.WaitGroup
		for i, ip := range addrs {
			wg.Go(func() {
				var err error
				got[i], err = c.LookupIP(callCtx(t), ip)
				assert.NoError(t, err)
			})
			synctest.Wait()
		}
		close(open)
		wg.Wait()
		assert.Len(t, m.Requests(), 1)
		for i, ip := range addrs {
			assert.Equal(t, ip, got[i].IP)
		}
	})
}

// TestCoalescingPanic: a panic while the shared request is sent (a
// response hook's) comes out of the call that sent it, on its goroutine,
// also when that call's context can end (its request then runs on a
// goroutine of its own); a call that shared it gets an error.
func TestCoalescingPanic(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(open, sampleAnswer))
		c := m.Client(t, synthient.WithResponseHook(func(*synthient.ResponseInfo) error { panic("hook") }))
		var shared error
		var wg sync.WaitGroup
		wg.Go(func() {
			assert.PanicsWithValue(t, "hook", func() { _, _ = c.LookupIP(callCtx(t), sampleIP) })
		})
		synctest.Wait()
		wg.Go(func() { _, shared = c.LookupIP(callCtx(t), sampleIP) })
		synctest.Wait()
		close(open)
		wg.Wait()
		require.Error(t, shared)
		assert.Equal(t, "synthient: LookupIP: the call that sent the shared request panicked", shared.Error())
	})
}

// TestCoalescingPanicOfALeaderThatCannotLeave: a request whose sender's
// context can never end (so it is sent on the sender's goroutine) and that
// panics leaves no flight behind: the panic goes on to the sender, and a
// later call of the same address sends a request of its own.
func TestCoalescingPanicOfALeaderThatCannotLeave(t *testing.T) {
	t.Parallel()
	m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, sampleAnswer)
	var calls atomic.Int32
	c := m.Client(t, synthient.WithResponseHook(func(*synthient.ResponseInfo) error {
		if calls.Add(1) == 1 {
			panic("hook")
		}
		return nil
	}))
	assert.PanicsWithValue(t, "hook", func() { _, _ = c.LookupIP(context.Background(), sampleIP) })
	l, err := c.LookupIP(callCtx(t), sampleIP)
	require.NoError(t, err, "a later call of the address")
	assert.Equal(t, sampleIP, l.IP)
	assert.Len(t, m.Requests(), 2)
}
