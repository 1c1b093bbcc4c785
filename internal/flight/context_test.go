package flight_test

// Tests of context.go: the context of a shared request keeps the
// context.Context contract, and the context to plan with follows the
// latest deadline of the callers.

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/flight"
)

// join adds a caller of key with deadline d (zero: none) to g, and waits
// until it has joined. Its outcome is dropped: the callers are gone once
// the test answers the request and waits for wg.
func join(t *testing.T, wg *sync.WaitGroup, g *flight.Group[*answer], r *request, d time.Time) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if !d.IsZero() {
		ctx, cancel = context.WithDeadline(context.Background(), d)
	}
	t.Cleanup(cancel)
	var out outcome
	do(wg, g, ctx, "k", r, nil, &out)
	synctest.Wait()
}

// TestFlightContext: the request's context has no deadline, however its
// callers' deadlines move, and successive Deadline calls agree; its plan
// has the latest deadline of the callers so far (none once one has none),
// and each plan's Deadline never changes.
func TestFlightContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
		for _, tc := range []struct {
			name      string
			deadlines []time.Time // of the callers, in the order they join
			plans     []time.Time // the plan's deadline after each joined (zero: none)
		}{
			{"later deadlines move the plan", []time.Time{at(10), at(30), at(20)}, []time.Time{at(10), at(30), at(30)}},
			{"a caller without a deadline ends the plan's", []time.Time{at(10), {}, at(50)}, []time.Time{at(10), {}, {}}},
			{"a leader without a deadline", []time.Time{{}, at(10)}, []time.Time{{}, {}}},
		} {
			var g flight.Group[*answer]
			r := newRequest(&answer{}, nil)
			var wg sync.WaitGroup
			join(t, &wg, &g, r, tc.deadlines[0])
			fetchCtx := <-r.ctx
			planner := flight.PlannerOf(fetchCtx)
			require.NotNil(t, planner, "%s: a flight's request plans with its callers' deadlines", tc.name)
			var earlier []context.Context
			for i, want := range tc.plans {
				if i > 0 {
					join(t, &wg, &g, r, tc.deadlines[i])
				}
				d, ok := fetchCtx.Deadline()
				assert.False(t, ok, "%s, caller %d: the request's context has a deadline %v", tc.name, i, d)
				plan := planner.Planning()
				requirePlanDeadline(t, plan, want, "%s, caller %d", tc.name, i)
				requirePlanDeadline(t, plan, want, "%s, caller %d, asked again", tc.name, i)
				assert.Equal(t, fetchCtx.Done(), plan.Done(), "%s: the plan ends with the request", tc.name)
				earlier = append(earlier, plan)
			}
			for i, plan := range earlier {
				requirePlanDeadline(t, plan, tc.plans[i], "%s: caller %d's plan, after the others joined", tc.name, i)
			}
			close(r.release)
			wg.Wait()
		}
	})
}

// requirePlanDeadline checks that ctx's deadline is want (zero: none).
func requirePlanDeadline(t *testing.T, ctx context.Context, want time.Time, msgAndArgs ...any) {
	t.Helper()
	d, ok := ctx.Deadline()
	require.Equal(t, !want.IsZero(), ok, msgAndArgs...)
	require.True(t, want.Equal(d), append([]any{"deadline %v, want %v: "}, d, want, msgAndArgs)...)
}

// TestFlightContextValuesAndEnd: the request's context has the leader's
// values; it does not end with the leader's context while others wait;
// it is no Planner's outside a flight.
func TestFlightContextValuesAndEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		var g flight.Group[*answer]
		r := newRequest(&answer{}, nil)
		leaderCtx, cancelLeader := context.WithCancel(context.WithValue(context.Background(), key{}, "leader's"))
		defer cancelLeader()
		var wg sync.WaitGroup
		var leader, follower outcome
		do(&wg, &g, leaderCtx, "k", r, nil, &leader)
		synctest.Wait()
		do(&wg, &g, context.Background(), "k", r, nil, &follower)
		synctest.Wait()
		fetchCtx := <-r.ctx
		assert.Equal(t, "leader's", fetchCtx.Value(key{}), "the leader's values")
		assert.Equal(t, "leader's", flight.PlannerOf(fetchCtx).Planning().Value(key{}), "the plan's values")
		cancelLeader()
		synctest.Wait()
		require.NoError(t, fetchCtx.Err(), "the request goes on while a caller waits")
		select {
		case <-fetchCtx.Done():
			t.Fatal("the request's context ended with the leader's")
		default:
		}
		close(r.release)
		wg.Wait()
		assert.Equal(t, flight.Left, leader.how)
		assert.Equal(t, flight.Shared, follower.how)
		assert.Nil(t, flight.PlannerOf(context.Background()), "no flight")
		assert.Nil(t, flight.PlannerOf(leaderCtx), "no flight")
	})
}
