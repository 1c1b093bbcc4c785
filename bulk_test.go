package synthient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// Every address comes back once, in input order; each distinct address is
// sent once, and the credits the results report are what the API charged.
func TestLookupIPsAllAnswersEveryAddressOnce(t *testing.T) {
	t.Parallel()
	dup := testAddr(3)
	zoned := netip.MustParseAddr("fe80::1%eth0")
	tests := []struct {
		name      string
		addrs     []netip.Addr
		p         *synthient.BulkParams
		requests  int
		lookedUp  int
		invalid   int
		duplicate int
		credits   int
	}{
		{"one batch", testAddrs(7), nil, 1, 7, 0, 0, 7},
		{"batches of 10", testAddrs(25), &synthient.BulkParams{BatchSize: 10}, 3, 25, 0, 0, 9 + 9 + 5},
		{"concurrent batches", testAddrs(95), &synthient.BulkParams{BatchSize: 10, Concurrency: 4}, 10, 95, 0, 0, 9*9 + 5},
		{"duplicates across batches", append(testAddrs(12), dup, dup, testAddr(0)), &synthient.BulkParams{BatchSize: 5}, 3, 15, 0, 3, 5 + 5 + 2},
		{"invalid addresses", []netip.Addr{{}, testAddr(1), zoned, testAddr(2)}, nil, 1, 2, 2, 0, 2},
		{"only invalid", []netip.Addr{{}, zoned}, nil, 0, 0, 2, 0, 0},
		{"empty input", nil, nil, 0, 0, 0, 0, 0},
		{"kept duplicates", []netip.Addr{dup, dup, testAddr(4)}, &synthient.BulkParams{KeepDuplicates: true}, 1, 3, 0, 0, 2},
		// An IPv4-mapped address is the IPv4 address it maps (RFC 4291
		// 2.5.5.2): sent once, charged once, whichever spelling comes first.
		{"a mapped address is its IPv4 address", []netip.Addr{netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("::ffff:198.18.0.1"), testAddr(1), netip.MustParseAddr("2001:db8::1")}, nil, 1, 4, 0, 2, 2},
		{"the IPv4 address first, its mapped form in the next batch", []netip.Addr{testAddr(9), netip.MustParseAddr("::ffff:198.18.0.9")}, &synthient.BulkParams{BatchSize: 1}, 1, 2, 0, 1, 1},
		{"kept duplicates in both spellings", []netip.Addr{netip.MustParseAddr("::ffff:198.18.0.9"), testAddr(9)}, &synthient.BulkParams{KeepDuplicates: true}, 1, 2, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := setup(t)

			run := runBulk(callCtx(t), c, slices.Values(tt.addrs), tt.p)

			run.requireInOrder(t, len(tt.addrs))
			dups := 0
			for i, r := range run.results {
				assert.Equal(t, tt.addrs[i], r.IP, "result %d", i)
				switch {
				case r.Duplicate:
					dups++
					first := run.results[r.FirstIndex]
					assert.Less(t, r.FirstIndex, r.Index)
					assert.Equal(t, r.IP.Unmap(), first.IP.Unmap(), "the same address (in either spelling)")
					assert.Equal(t, first.Outcome, r.Outcome)
					assert.Nil(t, r.Lookup, "a duplicate's result is its first occurrence's")
				case r.Outcome == synthient.Invalid:
					require.ErrorIs(t, run.errs[i], synthient.ErrInvalidArgument)
				default:
					require.NotNil(t, r.Lookup, "result %d", i)
					assert.Equal(t, r.IP, r.Lookup.IP)
					assert.Equal(t, r.Index, r.FirstIndex)
				}
			}
			outcomes := run.outcomes()
			assert.Equal(t, tt.lookedUp, outcomes[synthient.LookedUp], "looked up")
			assert.Equal(t, tt.invalid, outcomes[synthient.Invalid], "invalid")
			assert.Equal(t, tt.duplicate, dups, "duplicates")
			assert.Equal(t, tt.requests, srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
			assert.Equal(t, tt.credits, run.credits(synthient.LookedUp), "credits reported")
			assert.EqualValues(t, synthienttest.DefaultCredits-tt.credits, srv.Credits(srv.APIKey), "credits charged")

			plan, err := synthient.PlanLookupIPsAll(slices.Values(tt.addrs), tt.p)
			require.NoError(t, err)
			assert.Equal(t, synthient.BulkPlan{
				Addresses: int64(len(tt.addrs)), Invalid: int64(tt.invalid), Duplicates: int64(tt.duplicate),
				Distinct: int64(len(tt.addrs) - tt.invalid - tt.duplicate), Requests: int64(tt.requests), Credits: int64(tt.credits),
			}, *plan, "the plan is what the run did")
		})
	}
}

// A request that fails gives its addresses the outcome that says whether
// they may have been charged; the run goes on with the next batch.
func TestLookupIPsAllFailedBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fault   synthienttest.Fault
		outcome synthient.BulkOutcome
		credits int // reported on the failed batch's first address
		check   func(t *testing.T, err error)
	}{
		{"written then cut", synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest}, synthient.Unknown, 5,
			func(t *testing.T, err error) { _ = requireConnErr(t, err, false, false) }},
		{"503", statusFault(503), synthient.Unknown, 5, func(t *testing.T, err error) {
			_ = requireAPIErr(t, err, 503)
			_ = requireStop(t, err, 1, retry.MayHaveBeenProcessed)
		}},
		{"truncated answer", synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody}, synthient.Unknown, 5, nil},
		{"500", statusFault(500), synthient.Unknown, 5, func(t *testing.T, err error) {
			_ = requireAPIErr(t, err, 500)
			_ = requireStop(t, err, 1, retry.MayHaveBeenProcessed)
		}},
		{"200 without results", synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 200, Body: `{}`, ContentType: "application/json"},
			synthient.Unknown, 5, func(t *testing.T, err error) {
				var de *synthient.DecodeError
				require.ErrorAs(t, err, &de)
				assert.Empty(t, de.Missing)
			}},
		{"422", statusFault(422), synthient.Rejected, 0, func(t *testing.T, err error) { _ = requireAPIErr(t, err, 422) }},
		{"429 without Retry-After", statusFault(429), synthient.Rejected, 0, func(t *testing.T, err error) {
			_ = requireStop(t, err, 1, retry.RateLimitedWithoutRetryAfter)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t)
			// The second of three batches of 5 fails: the fault is
			// injected once the first was answered.
			var once sync.Once
			c := fakeClient(t, srv, synthient.WithResponseHook(func(*synthient.ResponseInfo) error {
				once.Do(func() { srv.Inject(synthienttest.RouteLookupIPs, 1, tt.fault) })
				return nil
			}))
			addrs := testAddrs(15)
			addrs = append(addrs, addrs[6]) // a duplicate of a failed address

			run := runBulk(callCtx(t), c, slices.Values(addrs), &synthient.BulkParams{BatchSize: 5, Concurrency: 1})

			run.requireInOrder(t, 16)
			for i, r := range run.results[:15] {
				want := synthient.LookedUp
				if i >= 5 && i < 10 {
					want = tt.outcome
					if tt.check != nil {
						tt.check(t, run.errs[i])
					}
				}
				assert.Equal(t, want, r.Outcome, "address %d", i)
			}
			assert.Equal(t, tt.credits, run.results[5].Credits, "credits of the failed batch")
			last := run.results[15]
			assert.True(t, last.Duplicate)
			assert.EqualValues(t, 6, last.FirstIndex)
			assert.Equal(t, tt.outcome, last.Outcome, "a duplicate shares its first occurrence's outcome")
			assert.Same(t, run.errs[6], run.errs[15], "and its error")
			assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "the run went on")
		})
	}
}

// After a 402 nothing more is sent; the rest of the input is still read and
// comes back not sent, with the 402.
func TestLookupIPsAllStopsAtPaymentRequired(t *testing.T) {
	t.Parallel()
	// Credits for two batches of 10 (9 each), not three.
	srv := fakeServer(t, synthienttest.WithCredits(20))
	c := fakeClient(t, srv)
	pulled := 0

	run := runBulk(callCtx(t), c, counted(testAddrs(55), &pulled), &synthient.BulkParams{BatchSize: 10, Concurrency: 1})

	assert.Equal(t, 55, pulled, "the whole input is read")
	run.requireInOrder(t, 55)
	outcomes := run.outcomes()
	assert.Equal(t, map[synthient.BulkOutcome]int{synthient.LookedUp: 20, synthient.Rejected: 10, synthient.NotSent: 25}, outcomes)
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteLookupIPs), "nothing is sent after the 402")
	for i := 30; i < 55; i++ {
		_ = requireAPIErr(t, run.errs[i], http.StatusPaymentRequired)
	}
	assert.Equal(t, 18, run.credits(synthient.LookedUp))
	assert.EqualValues(t, 2, srv.Credits(srv.APIKey))
}

// An error that every later request would get too (the key refused, no
// credits, the client closed) stops the sending: the addresses read after
// it come back not sent, with that very error, and so do their duplicates.
func TestLookupIPsAllStopsAfterErrorOfEveryRequest(t *testing.T) {
	t.Parallel()
	// injectAll makes every later request get status.
	injectAll := func(status int) func(*synthienttest.Server, *synthient.Client) {
		return func(srv *synthienttest.Server, _ *synthient.Client) {
			srv.Inject(synthienttest.RouteLookupIPs, -1, statusFault(status))
		}
	}
	tests := []struct {
		name    string
		stop    func(srv *synthienttest.Server, c *synthient.Client) // during the first batch's answer
		outcome synthient.BulkOutcome                                // of the second batch, the one that failed
		sent    int
		check   func(t *testing.T, err error)
	}{
		{"401", injectAll(http.StatusUnauthorized), synthient.Rejected, 2,
			func(t *testing.T, err error) { _ = requireAPIErr(t, err, http.StatusUnauthorized) }},
		{"402", injectAll(http.StatusPaymentRequired), synthient.Rejected, 2,
			func(t *testing.T, err error) { _ = requireAPIErr(t, err, http.StatusPaymentRequired) }},
		{"403", injectAll(http.StatusForbidden), synthient.Rejected, 2,
			func(t *testing.T, err error) { _ = requireAPIErr(t, err, http.StatusForbidden) }},
		{"client closed", func(_ *synthienttest.Server, c *synthient.Client) { c.Close() }, synthient.NotSent, 1,
			func(t *testing.T, err error) {
				require.ErrorIs(t, err, synthient.ErrClosed)
				assert.Zero(t, requirePlainError(t, err).Attempts)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t)
			var c *synthient.Client
			var once sync.Once
			c = fakeClient(t, srv, synthient.WithResponseHook(func(*synthient.ResponseInfo) error {
				once.Do(func() { tt.stop(srv, c) })
				return nil
			}))
			addrs := testAddrs(15)
			addrs = append(addrs, addrs[7], addrs[12]) // duplicates of the failed batch and of one never sent

			run := runBulk(callCtx(t), c, slices.Values(addrs), &synthient.BulkParams{BatchSize: 5, Concurrency: 1})

			run.requireInOrder(t, len(addrs))
			stopErr := run.errs[5]
			tt.check(t, stopErr)
			for i, r := range run.results[:15] {
				switch {
				case i < 5:
					assert.Equal(t, synthient.LookedUp, r.Outcome, "address %d", i)
				case i < 10:
					assert.Equal(t, tt.outcome, r.Outcome, "address %d", i)
					assert.Same(t, stopErr, run.errs[i], "address %d has its request's error", i)
				default:
					assert.Equal(t, synthient.NotSent, r.Outcome, "address %d", i)
					assert.Same(t, stopErr, run.errs[i], "address %d has the error that stopped the run", i)
				}
			}
			for i, first := range map[int]int{15: 7, 16: 12} {
				r := run.results[i]
				assert.True(t, r.Duplicate, "address %d", i)
				assert.EqualValues(t, first, r.FirstIndex, "address %d", i)
				assert.Equal(t, run.results[first].Outcome, r.Outcome, "address %d", i)
				assert.Same(t, stopErr, run.errs[i], "address %d", i)
			}
			assert.Equal(t, 5, run.credits(synthient.LookedUp), "credits of the first batch")
			assert.Zero(t, run.credits(tt.outcome)+run.credits(synthient.NotSent), "nothing charged after it")
			assert.Equal(t, tt.sent, srv.Arrivals(synthienttest.RouteLookupIPs), "nothing is sent after the stop")
		})
	}
}

// An input that arrives in bursts, as a pipe's does, with Concurrency 4
// and batches of 2: the first burst sends two requests, and the window has
// room for more. Between the bursts the input blocks while both requests
// are answered and their goroutines end (synctest.Wait). A refusal among
// those answers stops the run before the second burst sends anything; the
// answers are yielded when the input gives its next address, not once
// four requests are in flight.
func TestLookupIPsAllTakesAnswersInBetweenBursts(t *testing.T) {
	t.Parallel()
	burst1, burst2 := testAddrs(4), testAddrs(8)[4:]
	for _, refused := range []int{0, http.StatusPaymentRequired, http.StatusUnauthorized, http.StatusForbidden} {
		name := "all answered"
		if refused != 0 {
			name = fmt.Sprint(refused, " answered")
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				// Requests are answered once answer is closed; the one
				// holding the first address gets the refusal.
				answer := make(chan struct{})
				api := newMockAPI(t, func(req *http.Request) (*http.Response, error) {
					<-answer
					body, _ := io.ReadAll(req.Body)
					req.Body = io.NopCloser(bytes.NewReader(body))
					if refused != 0 && bytes.Contains(body, []byte(`"`+burst1[0].String()+`"`)) {
						return problem(refused)(req)
					}
					return echoBatch(t, nil)(req)
				})
				c := api.Client(t, synthient.WithoutPacing())
				var run bulkRun
				yieldedBeforeBurst2 := -1
				input := func(yield func(netip.Addr) bool) {
					for _, ip := range burst1 {
						if !yield(ip) {
							return
						}
					}
					// The input blocks: both requests are in flight, then
					// both answers come back.
					synctest.Wait()
					close(answer)
					synctest.Wait()
					for i, ip := range burst2 {
						if !yield(ip) {
							return
						}
						if i == 0 {
							yieldedBeforeBurst2 = len(run.results)
						}
					}
				}
				for r, err := range c.LookupIPsAll(context.Background(), input, &synthient.BulkParams{Concurrency: 4, BatchSize: 2}) {
					run.results = append(run.results, r)
					run.errs = append(run.errs, err)
				}

				run.requireInOrder(t, 8)
				// After a refusal the second burst's first address is settled
				// (not sent) at once, and yielded with the first burst.
				wantYielded := 4
				if refused != 0 {
					wantYielded = 5
				}
				assert.Equal(t, wantYielded, yieldedBeforeBurst2, "results yielded when the second burst began")
				if refused == 0 {
					assert.Len(t, api.Requests(), 4, "requests")
					assert.Equal(t, map[synthient.BulkOutcome]int{synthient.LookedUp: 8}, run.outcomes())
					return
				}
				assert.Len(t, api.Requests(), 2, "requests: none after the refusal was answered")
				want := []synthient.BulkOutcome{synthient.Rejected, synthient.Rejected, synthient.LookedUp, synthient.LookedUp,
					synthient.NotSent, synthient.NotSent, synthient.NotSent, synthient.NotSent}
				for i, r := range run.results {
					assert.Equal(t, want[i], r.Outcome, "address %d", i)
					if r.Outcome != synthient.LookedUp {
						_ = requireAPIErr(t, run.errs[i], refused)
					}
				}
			})
		})
	}
}

// The duplicates of addresses of several failed requests each share their
// own first occurrence's outcome and error, IPv4 and IPv6 alike; those of
// addresses looked up share its success. A duplicate reports no credits.
func TestLookupIPsAllDuplicatesOfSeveralFailedBatches(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t)
	// Of four batches of 5, the second gets a 503 and the third a 422.
	var once sync.Once
	c := fakeClient(t, srv, synthient.WithResponseHook(func(*synthient.ResponseInfo) error {
		once.Do(func() {
			srv.Inject(synthienttest.RouteLookupIPs, 1, statusFault(http.StatusServiceUnavailable))
			srv.Inject(synthienttest.RouteLookupIPs, 1, statusFault(http.StatusUnprocessableEntity))
		})
		return nil
	}))
	addrs := testAddrs(20)
	for i := 1; i < len(addrs); i += 2 {
		addrs[i] = testAddr6(i) // keyed apart from IPv4 in the set of distinct addresses
	}
	firsts := []int{12, 7, 2, 13, 17, 8, 12} // addresses 20 to 26 repeat these
	for _, i := range firsts {
		addrs = append(addrs, addrs[i])
	}

	run := runBulk(callCtx(t), c, slices.Values(addrs), &synthient.BulkParams{BatchSize: 5, Concurrency: 1})

	run.requireInOrder(t, len(addrs))
	_ = requireAPIErr(t, run.errs[5], http.StatusServiceUnavailable)
	_ = requireAPIErr(t, run.errs[10], http.StatusUnprocessableEntity)
	for k, first := range firsts {
		i := 20 + k
		r, want := run.results[i], run.results[first]
		assert.True(t, r.Duplicate, "address %d", i)
		assert.EqualValues(t, first, r.FirstIndex, "address %d", i)
		assert.Equal(t, addrs[first], r.IP, "address %d", i)
		assert.Equal(t, want.Outcome, r.Outcome, "address %d", i)
		assert.Nil(t, r.Lookup, "address %d", i)
		assert.Zero(t, r.Credits, "address %d", i)
		if want.Outcome == synthient.LookedUp {
			require.NoError(t, run.errs[i], "address %d", i)
		} else {
			assert.Same(t, run.errs[first], run.errs[i], "address %d has its first occurrence's error", i)
		}
	}
	assert.Equal(t, map[synthient.BulkOutcome]int{synthient.LookedUp: 12, synthient.Unknown: 7, synthient.Rejected: 8}, run.outcomes())
	assert.Equal(t, 4, srv.Arrivals(synthienttest.RouteLookupIPs))
}

// The run reads ahead of the first address not yielded at most its
// window, 2*(Concurrency+1)*BatchSize addresses, however few of them are
// sent: past it, the batch being gathered goes out before it is full, and
// every address is still looked up.
func TestLookupIPsAllReadAheadWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		valid    int        // distinct valid addresses first,
		fill     netip.Addr // then this one, settled at once, to three windows
		p        synthient.BulkParams
		requests int
	}{
		{"repeats of one address", 1, testAddr(0), synthient.BulkParams{BatchSize: 10, Concurrency: 1}, 1},
		{"invalid addresses", 1, netip.Addr{}, synthient.BulkParams{BatchSize: 5, Concurrency: 3}, 1},
		{"invalid addresses behind a batch in flight and one gathered", 11, netip.Addr{}, synthient.BulkParams{BatchSize: 10, Concurrency: 1}, 2},
		{"repeats behind a batch in flight and one gathered", 13, testAddr(12), synthient.BulkParams{BatchSize: 4, Concurrency: 2}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := setup(t)
			window := 2 * (tt.p.Concurrency + 1) * tt.p.BatchSize
			addrs := testAddrs(tt.valid)
			for len(addrs) < 3*window {
				addrs = append(addrs, tt.fill)
			}
			pulled, pulledAtFirst := 0, 0
			var run bulkRun
			for r, err := range c.LookupIPsAll(callCtx(t), counted(addrs, &pulled), &tt.p) {
				if r.Index == 0 {
					pulledAtFirst = pulled
				}
				run.results = append(run.results, r)
				run.errs = append(run.errs, err)
			}

			run.requireInOrder(t, len(addrs))
			assert.LessOrEqual(t, pulledAtFirst, window, "read ahead of the first result")
			for i, r := range run.results {
				want := synthient.LookedUp
				if !addrs[i].IsValid() {
					want = synthient.Invalid
				}
				require.Equal(t, want, r.Outcome, "address %d", i)
			}
			assert.Equal(t, tt.requests, srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
		})
	}
}

// Cancelling stops sending and reading at once; every address read comes
// back, with its request's outcome or not sent.
func TestLookupIPsAllCancel(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	pulled := 0
	var run bulkRun
	for r, err := range c.LookupIPsAll(ctx, counted(testAddrs(5000), &pulled), &synthient.BulkParams{BatchSize: 10, Concurrency: 2}) {
		run.results = append(run.results, r)
		run.errs = append(run.errs, err)
		if r.Index == 25 {
			cancel()
		}
	}

	sent := srv.Arrivals(synthienttest.RouteLookupIPs)
	run.requireInOrder(t, pulled)
	assert.Less(t, pulled, 200, "reading stops")
	outcomes := run.outcomes()
	// A batch in flight at the cancel was answered, or cut after it was
	// written (unknown), or before (not sent).
	// (The server may see a request cut after it was written only after
	// the run returned.)
	assert.LessOrEqual(t, outcomes[synthient.LookedUp], sent*10, "looked up")
	assert.LessOrEqual(t, sent*10, outcomes[synthient.LookedUp]+outcomes[synthient.Unknown], "every batch that arrived is looked up or unknown")
	assert.Equal(t, pulled, outcomes[synthient.LookedUp]+outcomes[synthient.Unknown]+outcomes[synthient.NotSent])
	for i, r := range run.results {
		if r.Outcome == synthient.NotSent {
			require.ErrorIs(t, run.errs[i], context.Canceled, "address %d", i)
			_ = requireStop(t, run.errs[i], 0, retry.ContextDone)
		}
	}
}

// A context that ended before the run sends nothing, and reads no more
// than the address that showed it.
func TestLookupIPsAllEndedContext(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pulled := 0

	run := runBulk(ctx, c, counted(testAddrs(100), &pulled), nil)

	assert.Equal(t, 1, pulled)
	run.requireInOrder(t, 1)
	assert.Equal(t, synthient.NotSent, run.results[0].Outcome)
	require.ErrorIs(t, run.errs[0], context.Canceled)
	_ = requireStop(t, run.errs[0], 0, retry.ContextDone)
	assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs))
}

// Breaking out of the loop stops the reading and the sending; the
// requests in flight are waited for, not leaked.
func TestLookupIPsAllBreak(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	pulled := 0
	n := 0
	for range c.LookupIPsAll(callCtx(t), counted(testAddrs(50_000), &pulled), &synthient.BulkParams{BatchSize: 10, Concurrency: 3}) { //nolint:errcheck // the loop counts items and breaks: what they hold is not this test's
		if n++; n == 5 {
			break
		}
	}
	// The run reads ahead at most its window: 2*(Concurrency+1) batches.
	sent := srv.Arrivals(synthienttest.RouteLookupIPs)
	assert.LessOrEqual(t, sent, 8, "requests")
	assert.LessOrEqual(t, pulled, 81, "reading stops")
	assert.Equal(t, sent, srv.Arrivals(synthienttest.RouteLookupIPs), "nothing is sent after the break")
}

// A closed client sends nothing: every address comes back not sent.
func TestLookupIPsAllClosedClient(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	require.NoError(t, c.Close())

	run := runBulk(callCtx(t), c, slices.Values(testAddrs(30)), &synthient.BulkParams{BatchSize: 10})

	run.requireInOrder(t, 30)
	assert.Equal(t, map[synthient.BulkOutcome]int{synthient.NotSent: 30}, run.outcomes())
	for _, err := range run.errs {
		require.ErrorIs(t, err, synthient.ErrClosed)
	}
	assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs))
}

// Bad parameters are refused before anything is read.
func TestLookupIPsAllInvalidParams(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	tests := []struct {
		name  string
		addrs iter.Seq[netip.Addr]
		p     *synthient.BulkParams
	}{
		{"negative concurrency", slices.Values(testAddrs(1)), &synthient.BulkParams{Concurrency: -1}},
		{"concurrency above the maximum", slices.Values(testAddrs(1)), &synthient.BulkParams{Concurrency: synthient.MaxBulkConcurrency + 1}},
		{"negative batch size", slices.Values(testAddrs(1)), &synthient.BulkParams{BatchSize: -1}},
		{"batch size above MaxBatchSize", slices.Values(testAddrs(1)), &synthient.BulkParams{BatchSize: synthient.MaxBatchSize + 1}},
		{"nil sequence", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := runBulk(callCtx(t), c, tt.addrs, tt.p)
			require.Len(t, run.results, 1)
			assert.EqualValues(t, -1, run.results[0].Index)
			assert.Equal(t, synthient.Invalid, run.results[0].Outcome)
			requireInvalid(t, run.errs[0])
			_, err := synthient.PlanLookupIPsAll(tt.addrs, tt.p)
			requireInvalid(t, err)
		})
	}
	assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs))
}

// The bounds of the parameters are accepted, by the run and the plan.
func TestLookupIPsAllParamsAtTheirBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		p        synthient.BulkParams
		requests int
	}{
		{"one request of one address at a time", synthient.BulkParams{Concurrency: 1, BatchSize: 1}, 3},
		{"MaxBulkConcurrency", synthient.BulkParams{Concurrency: synthient.MaxBulkConcurrency, BatchSize: 1}, 3},
		{"MaxBatchSize", synthient.BulkParams{BatchSize: synthient.MaxBatchSize}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := setup(t)

			run := runBulk(callCtx(t), c, slices.Values(testAddrs(3)), &tt.p)

			run.requireInOrder(t, 3)
			assert.Equal(t, map[synthient.BulkOutcome]int{synthient.LookedUp: 3}, run.outcomes())
			assert.Equal(t, tt.requests, srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
			plan, err := synthient.PlanLookupIPsAll(slices.Values(testAddrs(3)), &tt.p)
			require.NoError(t, err)
			assert.EqualValues(t, tt.requests, plan.Requests)
		})
	}
}

// Batches that come back out of order are yielded in input order.
func TestLookupIPsAllOrdersOutOfOrderAnswers(t *testing.T) {
	t.Parallel()
	// The first batch is answered only after the second arrived.
	second := make(chan struct{})
	var once sync.Once
	var n atomic.Int32
	echo := echoBatch(t, nil)
	api := newMockAPI(t, func(req *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			<-second
		} else {
			once.Do(func() { close(second) })
		}
		return echo(req)
	})
	c := api.Client(t)

	run := runBulk(callCtx(t), c, slices.Values(testAddrs(40)), &synthient.BulkParams{BatchSize: 10, Concurrency: 2})

	run.requireInOrder(t, 40)
	for i, r := range run.results {
		require.NotNil(t, r.Lookup)
		assert.Equal(t, testAddr(i), r.Lookup.IP)
	}
}

// An answer that lacks some addresses leaves those unknown: they were sent
// and may have been charged. The batch was answered, and so charged: its
// credits are on its first address looked up, also when the first address
// is the one lacking, so that the credits of the LookedUp results are
// those spent.
func TestLookupIPsAllPartialAnswer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		lost    int // the index lacking from the answer
		credits int // the index that carries the batch's credits
	}{
		{"a middle address lacks", 2, 0},
		{"the first address lacks", 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lose := func(ips []string) []string { return slices.Delete(ips, tt.lost, tt.lost+1) }
			c := newMockAPI(t, echoBatch(t, lose)).Client(t)

			run := runBulk(callCtx(t), c, slices.Values(testAddrs(4)), nil)

			run.requireInOrder(t, 4)
			for i, r := range run.results {
				want, credits := synthient.LookedUp, 0
				if i == tt.lost {
					want = synthient.Unknown
				}
				if i == tt.credits {
					credits = 4
				}
				assert.Equal(t, want, r.Outcome, "address %d", i)
				assert.Equal(t, credits, r.Credits, "credits of address %d", i)
			}
			var de *synthient.DecodeError
			require.ErrorAs(t, run.errs[tt.lost], &de)
			assert.Equal(t, []netip.Addr{testAddr(tt.lost)}, de.Missing)
			assert.Equal(t, testAddr(3), run.results[3].Lookup.IP, "results stay with their addresses")
			assert.Equal(t, 4, run.credits(synthient.LookedUp), "the batch was answered, and charged")
		})
	}
}

// An input that repeats one address without end is read in bounded
// memory: the address is sent once, in a batch sent before it is full.
func TestLookupIPsAllRepeatedAddress(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	ip := testAddr(9)
	repeated := func(yield func(netip.Addr) bool) {
		for range 30_000 {
			if !yield(ip) {
				return
			}
		}
	}

	run := runBulk(callCtx(t), c, repeated, &synthient.BulkParams{BatchSize: 10, Concurrency: 1})

	run.requireInOrder(t, 30_000)
	assert.Equal(t, map[synthient.BulkOutcome]int{synthient.LookedUp: 30_000}, run.outcomes())
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs))
	assert.Equal(t, 1, run.credits(synthient.LookedUp))
}

// BeforeSend sees each request's addresses before the request is sent,
// in the order sent; an error it returns keeps that request and every
// later one from being sent, their addresses NotSent with that error.
func TestLookupIPsAllBeforeSend(t *testing.T) {
	t.Parallel()
	errJournal := errors.New("journal full")
	tests := []struct {
		name     string
		failAt   int // the call of BeforeSend that fails, from 1; 0 for none
		requests int
		lookedUp int // of the 25 distinct addresses
	}{
		{"every request", 0, 3, 25},
		{"the second fails", 2, 1, 10},
		{"the first fails", 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := setup(t)
			addrs := append(testAddrs(25), testAddr(0)) // the last repeats the first
			var seen [][]netip.Addr
			p := &synthient.BulkParams{BatchSize: 10, Concurrency: 1, BeforeSend: func(batch []netip.Addr) error {
				// Nothing of this request reached the API yet.
				assert.Equal(t, len(seen), srv.Arrivals(synthienttest.RouteLookupIPs), "requests sent before BeforeSend returned")
				seen = append(seen, slices.Clone(batch))
				if len(seen) == tt.failAt {
					return errJournal
				}
				return nil
			}}

			run := runBulk(callCtx(t), c, slices.Values(addrs), p)

			require.Len(t, run.results, 26)
			assert.Equal(t, tt.requests, srv.Arrivals(synthienttest.RouteLookupIPs), "requests sent")
			want := [][]netip.Addr{addrs[:10], addrs[10:20], addrs[20:25]}
			if tt.failAt > 0 {
				want = want[:tt.failAt]
			}
			assert.Equal(t, want, seen, "the batches BeforeSend saw")
			for i, r := range run.results[:25] {
				want := synthient.LookedUp
				if i >= tt.lookedUp {
					want = synthient.NotSent
					require.ErrorIs(t, run.errs[i], errJournal, "result %d", i)
				}
				assert.Equal(t, want, r.Outcome, "result %d", i)
			}
			assert.Equal(t, run.results[0].Outcome, run.results[25].Outcome, "the repeat shares its first occurrence's outcome")
		})
	}
}

func TestBulkOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[synthient.BulkOutcome]string{
		synthient.LookedUp: "looked_up", synthient.Invalid: "invalid", synthient.NotSent: "not_sent",
		synthient.Unknown: "unknown", synthient.Rejected: "rejected", 0: "BulkOutcome(0)",
	} {
		assert.Equal(t, want, o.String())
	}
}

// bulkInput is the input of BenchmarkLookupIPsAll: n addresses of which 1%
// are invalid (the zero Addr) and 10% repeat an earlier address.
func bulkInput(n int) iter.Seq[netip.Addr] {
	// Public addresses (11.0.0.0/8), which the fake answers in full, as
	// the API would; it answers private ones with little data.
	addr := func(k int) netip.Addr { return netip.AddrFrom4([4]byte{11, byte(k >> 16), byte(k >> 8), byte(k)}) } //nolint:gosec // k's low three bytes, cut on purpose
	return func(yield func(netip.Addr) bool) {
		for i := range n {
			var ip netip.Addr
			switch {
			case i%100 == 0:
				// invalid
			case i%10 == 5:
				ip = addr(i/3/10*10 + 1) // an earlier address, neither invalid nor a repeat
			default:
				ip = addr(i)
			}
			if !yield(ip) {
				return
			}
		}
	}
}

// BenchmarkLookupIPsAll looks up a million addresses (1% invalid, 10%
// repeated) from an iterator on the fake API, without its rate limits: the
// SDK's bulk method against what a careful user writes with net/http
// alone (a set of the addresses seen, batches of 1000, four workers; no
// ordering, no per-address accounting). It reports the requests, the
// credits charged and the peak heap in use, sampled every 10,000
// addresses (the fake server runs in the same process and counts too).
func BenchmarkLookupIPsAll(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("addrs=%d/impl=sdk", n), func(b *testing.B) {
			srv, h := bulkFake(b)
			c := fakeClient(b, srv)
			for b.Loop() {
				got := 0
				for r, err := range c.LookupIPsAll(context.Background(), bulkInput(n), nil) {
					if err != nil && r.Outcome != synthient.Invalid {
						b.Fatal(r.Index, err)
					}
					got++
					h.sample(got)
				}
				if got != n {
					b.Fatalf("%d results, want %d", got, n)
				}
			}
			reportBulk(b, srv, h)
		})
		b.Run(fmt.Sprintf("addrs=%d/impl=plain", n), func(b *testing.B) {
			srv, h := bulkFake(b)
			p := newPlainClient(b, srv.URL)
			for b.Loop() {
				if got := p.lookupAll(b, srv.APIKey, bulkInput(n), h); got != n*89/100 {
					b.Fatalf("%d results, want %d", got, n*89/100)
				}
			}
			reportBulk(b, srv, h)
		})
	}
}

// bulkCredits are the fake's credits in a bulk benchmark: enough for any
// number of runs.
const bulkCredits = 1 << 50

// bulkFake starts the fake API of a bulk benchmark, with bulkCredits and
// no rate limits, and a heap sampler; it reports allocations.
func bulkFake(b *testing.B) (*synthienttest.Server, *heapSampler) {
	srv := fakeServer(b, synthienttest.WithCredits(bulkCredits), synthienttest.WithoutRateLimits())
	b.ReportAllocs()
	runtime.GC()
	return srv, &heapSampler{}
}

// reportBulk reports the requests and credits of one run, and the peak
// heap in use.
func reportBulk(b *testing.B, srv *synthienttest.Server, h *heapSampler) {
	runs := float64(b.N)
	b.ReportMetric(float64(srv.Arrivals(synthienttest.RouteLookupIPs))/runs, "requests/op")
	b.ReportMetric(float64(bulkCredits-srv.Credits(srv.APIKey))/runs, "credits/op")
	b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB")
}

// lookupAll is the plain bulk lookup: the distinct valid addresses in
// batches of 1000, sent by four workers; it returns the results decoded.
func (p *plainClient) lookupAll(b *testing.B, key string, addrs iter.Seq[netip.Addr], h *heapSampler) int {
	batches := make(chan []string)
	var results atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for batch := range batches {
				results.Add(int64(p.lookupBatch(b, key, batch)))
			}
		})
	}
	seen := map[netip.Addr]struct{}{}
	var batch []string
	read := 0
	for ip := range addrs {
		read++
		h.sample(read)
		if _, dup := seen[ip]; dup || !ip.IsValid() {
			continue
		}
		seen[ip] = struct{}{}
		if batch = append(batch, ip.String()); len(batch) == synthient.MaxBatchSize {
			batches <- batch
			batch = nil
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	return int(results.Load())
}

func (p *plainClient) lookupBatch(b *testing.B, key string, ips []string) int {
	body, err := json.Marshal(map[string][]string{"ips": ips})
	if err != nil {
		b.Error(err)
		return 0
	}
	req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, p.base+"/lookup/ips", bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return 0
	}
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		b.Error(err)
		return 0
	}
	defer resp.Body.Close() //nolint:errcheck // decoded or given up: Close says nothing more
	var out struct{ Results []synthient.IPLookup }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		b.Errorf("status %d", resp.StatusCode)
		return 0
	}
	return len(out.Results)
}

// interleaved returns n addresses of which the even ones are those of
// cached (testAddr(i) for even i) and the odd ones are not.
func interleaved(n int) (all, cached []netip.Addr) {
	for i := range n {
		all = append(all, testAddr(i))
		if i%2 == 0 {
			cached = append(cached, testAddr(i))
		}
	}
	return all, cached
}

// TestLookupIPsAllWarmCache: with a warm cache, an address found there is
// yielded LookedUp and Cached, with Credits 0, and is not sent; the
// requests are formed of the others only, full (the cached and uncached
// addresses alternate in the input, yet 3000 addresses of which 1500 are
// cached make two requests, not three); their answers are stored, so a
// second run sends nothing. The credits reported are what the API
// charged.
func TestLookupIPsAllWarmCache(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cache func() synthient.Cache
	}{
		{"Cache", func() synthient.Cache { return synthient.NewMemoryCache(10_000, time.Hour) }},
		{"BatchCache", func() synthient.Cache {
			return batchSpy{&spyCache{Cache: synthient.NewMemoryCache(10_000, time.Hour)}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			all, cached := interleaved(3000)
			srv := fakeServer(t)
			rec := &recorder{}
			c := fakeClient(t, srv, synthient.WithCache(tc.cache()), synthient.WithObserver(rec))
			warm := runBulk(callCtx(t), c, slices.Values(cached), nil)
			warm.requireInOrder(t, len(cached))
			spent := synthienttest.DefaultCredits - srv.Credits(srv.APIKey)
			requests := srv.Arrivals(synthienttest.RouteLookupIPs)
			require.Equal(t, 2, requests)

			input := append(slices.Clone(all), all[0], netip.Addr{}, all[1]) // two repeats, one invalid
			run := runBulk(callCtx(t), c, slices.Values(input), nil)
			run.requireInOrder(t, len(input))
			assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIPs)-requests, "two full requests for the 1500 uncached")
			for i, r := range run.results[:3000] {
				require.Equal(t, synthient.LookedUp, r.Outcome, "result %d", i)
				require.NotNil(t, r.Lookup, "result %d", i)
				assert.Equal(t, all[i], r.Lookup.IP)
				assert.Equal(t, i%2 == 0, r.Cached, "result %d cached", i)
				assert.Equal(t, r.Cached, !r.Lookup.CachedAt.IsZero(), "result %d: CachedAt", i)
				if r.Cached {
					assert.Zero(t, r.Credits, "result %d", i)
				}
			}
			for _, r := range run.results[3000:] {
				assert.False(t, r.Cached, "a duplicate or an invalid address is not marked cached")
			}
			assert.True(t, run.results[3000].Duplicate)
			assert.Equal(t, synthient.LookedUp, run.results[3000].Outcome, "the repeat of a cached address")
			charged := synthienttest.DefaultCredits - srv.Credits(srv.APIKey) - spent
			assert.EqualValues(t, 900+450, charged, "the uncached addresses only")
			assert.EqualValues(t, charged, run.credits(synthient.LookedUp), "credits reported")

			hits, saved := 0, 0
			for _, e := range of(rec.Events(), "EndCall") {
				hits += e.callEnd.CacheHits
				saved += e.callEnd.CreditsSaved
			}
			assert.Equal(t, 1500, hits, "the observer counts the hits")
			assert.Equal(t, 900+450, saved, "ceil(0.9 n) for each group of n found")

			again := runBulk(callCtx(t), c, slices.Values(all), nil)
			again.requireInOrder(t, len(all))
			assert.Equal(t, 4, srv.Arrivals(synthienttest.RouteLookupIPs), "the answers were stored: nothing sent")
			for i, r := range again.results {
				assert.True(t, r.Cached, "result %d", i)
			}
		})
	}
}

// TestLookupIPsAllCacheFailing: a cache that fails makes a bulk lookup go
// to the API for every address, as without one.
func TestLookupIPsAllCacheFailing(t *testing.T) {
	t.Parallel()
	spy := newSpyCache()
	spy.fail = errors.New("store down")
	c, srv := setup(t, synthient.WithCache(spy))
	run := runBulk(callCtx(t), c, slices.Values(testAddrs(1500)), nil)
	run.requireInOrder(t, 1500)
	assert.Equal(t, 1500, run.outcomes()[synthient.LookedUp])
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIPs))
	assert.Equal(t, 900+450, run.credits(synthient.LookedUp))
}

// TestLookupIPsAllCacheAfterRefusal: after a 402, an address found in the
// cache is still yielded from it; the others are not sent.
func TestLookupIPsAllCacheAfterRefusal(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, synthienttest.WithCredits(9))
	c := fakeClient(t, srv, synthient.WithCache(synthient.NewMemoryCache(100, time.Hour)))
	input := testAddrs(40)
	warm := runBulk(callCtx(t), c, slices.Values(input[30:40]), &synthient.BulkParams{BatchSize: 10})
	warm.requireInOrder(t, 10)
	require.Equal(t, synthient.LookedUp, warm.results[0].Outcome)

	run := runBulk(callCtx(t), c, slices.Values(input), &synthient.BulkParams{BatchSize: 10, Concurrency: 1})
	run.requireInOrder(t, 40)
	for i, r := range run.results {
		switch {
		case i >= 30:
			assert.True(t, r.Cached, "result %d: in the cache", i)
			assert.Equal(t, synthient.LookedUp, r.Outcome)
		case i < 10:
			assert.Equal(t, synthient.Rejected, r.Outcome, "result %d: the 402", i)
		default:
			assert.Equal(t, synthient.NotSent, r.Outcome, "result %d: after the 402", i)
			_ = requireAPIErr(t, run.errs[i], http.StatusPaymentRequired)
		}
	}
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIPs), "nothing sent after the 402")
}

// TestLookupIPsAllCacheCancel: with a cache, a run whose context ends
// midway still yields every address read, once, in order.
func TestLookupIPsAllCacheCancel(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, synthient.WithCache(synthient.NewMemoryCache(10_000, time.Hour)))
	all, cached := interleaved(400)
	runBulk(callCtx(t), c, slices.Values(cached), nil)
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	pulled := 0
	var run bulkRun
	for r, err := range c.LookupIPsAll(ctx, counted(all, &pulled), &synthient.BulkParams{BatchSize: 10, Concurrency: 2}) {
		run.results = append(run.results, r)
		run.errs = append(run.errs, err)
		if r.Index == 55 {
			cancel()
		}
	}
	run.requireInOrder(t, pulled)
	assert.Less(t, pulled, 400, "reading stops")
	for i, r := range run.results {
		if r.Outcome == synthient.NotSent {
			assert.ErrorIs(t, run.errs[i], context.Canceled, "address %d", i)
		}
	}
}

// ---- The runs of the tests ----

// testAddr6 returns the i-th of 2^16 distinct IPv6 addresses of the
// documentation range 2001:db8::/32.
func testAddr6(i int) netip.Addr {
	return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(i >> 8), 15: byte(i)}) //nolint:gosec // i's low two bytes, cut on purpose
}

// bulkRun is the outcome of one range over LookupIPsAll.
type bulkRun struct {
	results []synthient.BulkResult
	errs    []error // by result
}

// runBulk ranges over LookupIPsAll of addrs to the end.
func runBulk(ctx context.Context, c *synthient.Client, addrs iter.Seq[netip.Addr], p *synthient.BulkParams) bulkRun {
	var run bulkRun
	for r, err := range c.LookupIPsAll(ctx, addrs, p) {
		run.results = append(run.results, r)
		run.errs = append(run.errs, err)
	}
	return run
}

// outcomes counts the results by outcome.
func (run bulkRun) outcomes() map[synthient.BulkOutcome]int {
	n := map[synthient.BulkOutcome]int{}
	for _, r := range run.results {
		n[r.Outcome]++
	}
	return n
}

// credits sums the Credits of the results with outcome o.
func (run bulkRun) credits(o synthient.BulkOutcome) int {
	n := 0
	for _, r := range run.results {
		if r.Outcome == o {
			n += r.Credits
		}
	}
	return n
}

// requireInOrder checks that the results are the n addresses read, in
// order, each with an error exactly when it was not looked up.
func (run bulkRun) requireInOrder(t testing.TB, n int) {
	t.Helper()
	require.Len(t, run.results, n, "one result per address read")
	for i, r := range run.results {
		require.EqualValues(t, i, r.Index, "result %d out of order", i)
		if r.Outcome == synthient.LookedUp {
			require.NoError(t, run.errs[i], "result %d", i)
		} else {
			require.Error(t, run.errs[i], "result %d (%s)", i, r.Outcome)
		}
	}
}
