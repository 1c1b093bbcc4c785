package flight_test

// Tests of flight.go: who sends, who shares, who leaves, and what each
// gets. They run in synctest bubbles: synctest.Wait returns once every
// caller is blocked, so each has joined its flight (or left it) before the
// test lets the request answer.

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/flight"
)

// answer is what the tests' requests return.
type answer struct {
	N    int
	Tags []string
}

// request is a fetch that the test answers: it records the context it was
// given, then waits for release and returns res and err (or panics with
// panicValue).
type request struct {
	calls      atomic.Int32
	ctx        chan context.Context // the context of each call, in turn
	release    chan struct{}
	res        *answer
	err        error
	panicValue any
	dups       atomic.Int32
}

func newRequest(res *answer, err error) *request {
	return &request{ctx: make(chan context.Context, 8), release: make(chan struct{}), res: res, err: err}
}

func (r *request) fetch(ctx context.Context) (*answer, error) {
	r.calls.Add(1)
	r.ctx <- ctx
	<-r.release
	if r.panicValue != nil {
		panic(r.panicValue)
	}
	return r.res, r.err
}

// dup copies a, sharing no memory with it, and counts the copies.
func (r *request) dup(a *answer) *answer {
	r.dups.Add(1)
	return &answer{N: a.N, Tags: slices.Clone(a.Tags)}
}

// outcome is what one caller of Do got.
type outcome struct {
	res *answer
	how flight.Outcome
	err error
}

// owner records the hand-off of a leader's call.
type owner struct {
	causes chan error
	ended  atomic.Int32
}

func newOwner() *owner { return &owner{causes: make(chan error, 1)} }

func (o *owner) HandOff(cause error) func() {
	o.causes <- cause
	return func() { o.ended.Add(1) }
}

// do starts a caller of key on its own goroutine, its outcome in *out.
func do(wg *sync.WaitGroup, g *flight.Group[*answer], ctx context.Context, key string, r *request, o flight.Owner, out *outcome) {
	wg.Go(func() { out.res, out.how, out.err = g.Do(ctx, key, r.fetch, r.dup, o) })
}

// TestDoShares: the first caller of a key sends, every caller that comes
// before the answer shares it and gets a copy of its own, made before any
// caller goes; the request is sent once; a caller of another key sends its
// own; once answered, the next caller of the key sends again.
func TestDoShares(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"contexts that can end", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
		{"contexts without an end", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var g flight.Group[*answer]
				r := newRequest(&answer{N: 7, Tags: []string{"a"}}, nil)
				other := newRequest(&answer{N: 8}, nil)
				gen := g.Generation("k")
				var wg sync.WaitGroup
				outs := make([]outcome, 4)
				var otherOut outcome
				ctx, cancel := tc.ctx()
				defer cancel()
				for i := range outs {
					do(&wg, &g, ctx, "k", r, nil, &outs[i])
					synctest.Wait() // caller 0 leads
				}
				do(&wg, &g, ctx, "other", other, nil, &otherOut)
				synctest.Wait()
				require.EqualValues(t, 1, r.calls.Load(), "requests of k")
				require.EqualValues(t, 1, other.calls.Load(), "requests of another key")
				assert.Equal(t, gen, g.Generation("k"), "no flight of k ended yet")
				close(other.release)
				close(r.release)
				wg.Wait()

				assert.Equal(t, outcome{r.res, flight.Sent, nil}, outs[0], "the leader gets its own answer")
				for i, o := range outs[1:] {
					assert.Equal(t, flight.Shared, o.how, "caller %d", i+1)
					require.NoError(t, o.err, "caller %d", i+1)
					assert.Equal(t, r.res, o.res, "caller %d: the answer", i+1)
					assert.NotSame(t, r.res, o.res, "caller %d: a copy", i+1)
				}
				assert.EqualValues(t, 3, r.dups.Load(), "one copy for each caller but the leader")
				outs[1].res.Tags[0] = "changed"
				assert.Equal(t, "a", outs[2].res.Tags[0], "each copy is its own")
				assert.Equal(t, "a", r.res.Tags[0], "each copy is its own")
				assert.Equal(t, outcome{other.res, flight.Sent, nil}, otherOut)
				assert.Equal(t, gen+1, g.Generation("k"), "the flight of k ended once")

				again := newRequest(&answer{N: 9}, nil)
				close(again.release)
				res, how, err := g.Do(ctx, "k", again.fetch, again.dup, nil)
				require.NoError(t, err)
				assert.Equal(t, flight.Sent, how, "once answered, the next caller sends")
				assert.Equal(t, 9, res.N)
			})
		})
	}
}

// TestDoSharesErrors: an error is every caller's, as it is, with no copy;
// a caller that shared it gets no answer.
func TestDoSharesErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var g flight.Group[*answer]
		failure := errors.New("503")
		r := newRequest(&answer{N: 1}, failure) // an answer beside the error stays the leader's
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		outs := make([]outcome, 3)
		for i := range outs {
			do(&wg, &g, ctx, "k", r, nil, &outs[i])
			synctest.Wait()
		}
		close(r.release)
		wg.Wait()
		assert.Equal(t, outcome{r.res, flight.Sent, failure}, outs[0])
		for _, o := range outs[1:] {
			assert.Equal(t, outcome{nil, flight.Shared, failure}, o)
		}
		assert.Zero(t, r.dups.Load(), "copies of a failed request's answer")
	})
}

// TestDoLeaderThatCannotLeave: a leader whose context can never end sends
// on its own goroutine, with its own context; callers that can leave
// still share its request.
func TestDoLeaderThatCannotLeave(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var g flight.Group[*answer]
		r := newRequest(&answer{N: 3}, nil)
		type key struct{}
		leaderCtx := context.WithValue(context.Background(), key{}, "leader")
		var wg sync.WaitGroup
		var leader, follower outcome
		do(&wg, &g, leaderCtx, "k", r, nil, &leader)
		synctest.Wait()
		fetchCtx := <-r.ctx
		assert.Equal(t, leaderCtx, fetchCtx, "the request's context is the leader's own")
		assert.Nil(t, flight.PlannerOf(fetchCtx), "a leader's own context plans by its own deadline")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		do(&wg, &g, ctx, "k", r, nil, &follower)
		synctest.Wait()
		close(r.release)
		wg.Wait()
		assert.Equal(t, outcome{r.res, flight.Sent, nil}, leader)
		assert.Equal(t, flight.Shared, follower.how)
		assert.Equal(t, r.res, follower.res)
		assert.EqualValues(t, 1, r.calls.Load())
	})
}

// TestDoLeave: a caller whose context ends leaves at once with its
// context's error, and the request goes on for the others. A leader that
// leaves first hands the end of its call to the flight, which ends it once
// the request is done; a caller that shared the request hands nothing.
func TestDoLeave(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		leaves int // the caller that leaves
	}{
		{"the leader leaves", 0},
		{"a caller that shared leaves", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var g flight.Group[*answer]
				r := newRequest(&answer{N: 5}, nil)
				owners := []*owner{newOwner(), newOwner(), newOwner()}
				cancels := make([]context.CancelFunc, len(owners))
				outs := make([]outcome, len(owners))
				var wg sync.WaitGroup
				for i := range owners {
					var ctx context.Context
					ctx, cancels[i] = context.WithCancel(context.Background())
					defer cancels[i]()
					do(&wg, &g, ctx, "k", r, owners[i], &outs[i])
					synctest.Wait()
				}
				fetchCtx := <-r.ctx
				cancels[tc.leaves]()
				synctest.Wait()
				assert.Equal(t, outcome{nil, flight.Left, context.Canceled}, outs[tc.leaves], "the caller left at once")
				require.NoError(t, fetchCtx.Err(), "the request goes on for the others")
				close(r.release)
				wg.Wait()

				for i, o := range outs {
					if i == tc.leaves {
						continue
					}
					require.NoError(t, o.err, "caller %d", i)
					assert.Equal(t, r.res, o.res, "caller %d", i)
				}
				wantCopies := 1 // the leader's other follower
				if tc.leaves == 0 {
					wantCopies = 2 // both followers: the leader left
				}
				assert.EqualValues(t, wantCopies, r.dups.Load(), "a copy for each caller still waiting but the leader")
				for i, o := range owners {
					handed := i == 0 && tc.leaves == 0
					assert.Equal(t, handed, len(o.causes) == 1, "owner %d handed its end off", i)
					assert.Equal(t, boolInt(handed), int(o.ended.Load()), "owner %d ended by the flight", i)
					if handed {
						assert.Equal(t, context.Canceled, <-o.causes, "the cause handed off")
					}
				}
			})
		})
	}
}

// TestDoLastLeaves: when every caller has left, the last cancels the
// request, with its context's error as the request context's Err, and
// gets the cancelled request's result, as a lone caller would; a caller
// that comes meanwhile starts a flight of its own.
func TestDoLastLeaves(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		callers int
		want    flight.Outcome // what the last to leave gets
	}{
		{"a lone leader", 1, flight.Sent},
		{"a caller that shared it, after the leader", 2, flight.Shared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var g flight.Group[*answer]
				cancelled := errors.New("cancelled request")
				r := newRequest(nil, cancelled)
				leader := newOwner()
				outs := make([]outcome, tc.callers)
				cancels := make([]context.CancelCauseFunc, tc.callers)
				var wg sync.WaitGroup
				for i := range outs {
					var ctx context.Context
					ctx, cancels[i] = context.WithCancelCause(context.Background())
					o := flight.Owner(nil)
					if i == 0 {
						o = leader
					}
					do(&wg, &g, ctx, "k", r, o, &outs[i])
					synctest.Wait()
				}
				fetchCtx := <-r.ctx
				gen := g.Generation("k")
				last := errors.New("the last caller's cause")
				for i := range cancels[:tc.callers-1] {
					cancels[i](nil)
					synctest.Wait()
				}
				cancels[tc.callers-1](last)
				synctest.Wait()
				require.ErrorIs(t, fetchCtx.Err(), context.Canceled, "the request is cancelled with the last caller's context's error")
				require.NotErrorIs(t, fetchCtx.Err(), last, "Err is the context's error, not its cause")
				assert.Equal(t, outcome{}, outs[tc.callers-1], "the last waits for the request to stop")

				// A caller that comes now starts afresh.
				fresh := newRequest(&answer{N: 2}, nil)
				close(fresh.release)
				res, how, err := g.Do(context.Background(), "k", fresh.fetch, fresh.dup, nil)
				require.NoError(t, err)
				assert.Equal(t, flight.Sent, how)
				assert.Equal(t, 2, res.N)

				close(r.release)
				wg.Wait()
				for i := range cancels {
					cancels[i](nil)
				}
				assert.Equal(t, outcome{nil, tc.want, cancelled}, outs[tc.callers-1])
				assert.Equal(t, gen+1, g.Generation("k"), "only the flight answered counts as ended")
				assert.Equal(t, tc.callers > 1, len(leader.causes) == 1, "the leader handed its end off when it left first")
			})
		})
	}
}

// TestDoAnsweredBeforeLeaving: a caller whose context ends once the
// answer is in, while the copies are being made, gets the answer: it no
// longer leaves.
func TestDoAnsweredBeforeLeaving(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var g flight.Group[*answer]
		r := newRequest(&answer{N: 6}, nil)
		followerCtx, cancelFollower := context.WithCancel(context.Background())
		defer cancelFollower()
		dup := func(a *answer) *answer {
			cancelFollower() // the follower's context ends as its copy is made
			synctest.Wait()  // and it has seen it end
			return r.dup(a)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		var leader, follower outcome
		wg.Go(func() { leader.res, leader.how, leader.err = g.Do(ctx, "k", r.fetch, dup, nil) })
		synctest.Wait()
		wg.Go(func() { follower.res, follower.how, follower.err = g.Do(followerCtx, "k", r.fetch, dup, nil) })
		synctest.Wait()
		close(r.release)
		wg.Wait()
		assert.Equal(t, outcome{r.res, flight.Sent, nil}, leader)
		assert.Equal(t, flight.Shared, follower.how, "the follower got the answer")
		require.NoError(t, follower.err)
		assert.Equal(t, r.res, follower.res)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDoPanic: a panic in the request comes out of the leader, on its own
// goroutine, whether the request runs there or on the flight's; unless
// the leader left, when nothing panics. The callers that shared the
// request get ErrPanicked, and the flight is over: the next caller sends.
func TestDoPanic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		leaderCtx  func() (context.Context, context.CancelFunc)
		leaderLeft bool
	}{
		{"a leader that can leave", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, false},
		{"a leader that cannot leave", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, false},
		{"a leader that left", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var g flight.Group[*answer]
				r := newRequest(&answer{}, nil)
				r.panicValue = "boom"
				ctx, cancel := tc.leaderCtx()
				defer cancel()
				var wg sync.WaitGroup
				var leader, follower outcome
				var panicked any
				wg.Go(func() {
					defer func() { panicked = recover() }()
					leader.res, leader.how, leader.err = g.Do(ctx, "k", r.fetch, r.dup, nil)
				})
				synctest.Wait()
				do(&wg, &g, context.Background(), "k", r, nil, &follower)
				synctest.Wait()
				if tc.leaderLeft {
					cancel()
					synctest.Wait()
				}
				close(r.release)
				wg.Wait()
				if tc.leaderLeft {
					assert.Nil(t, panicked, "a leader that left does not panic")
					assert.Equal(t, flight.Left, leader.how)
				} else {
					assert.Equal(t, "boom", panicked, "the leader panics with the request's panic")
				}
				assert.Equal(t, outcome{nil, flight.Shared, flight.ErrPanicked}, follower)

				again := newRequest(&answer{N: 4}, nil)
				close(again.release)
				res, how, err := g.Do(context.Background(), "k", again.fetch, again.dup, nil)
				require.NoError(t, err, "the flight is over")
				assert.Equal(t, flight.Sent, how)
				assert.Equal(t, 4, res.N)
			})
		})
	}
}

// TestGeneration: the count of a key moves when a flight of it ends, and
// not for a key counted apart (another FNV-1a slot of 64).
func TestGeneration(t *testing.T) {
	t.Parallel()
	slot := func(key string) uint32 {
		h := fnv.New32a()
		_, _ = h.Write([]byte(key))
		return h.Sum32() % 64
	}
	k := "v1:ip:203.0.113.7"
	other := ""
	for i := 0; other == ""; i++ {
		if key := "v1:ip:198.51.100." + strconv.Itoa(i); slot(key) != slot(k) {
			other = key
		}
	}
	var g flight.Group[*answer]
	before, beforeOther := g.Generation(k), g.Generation(other)
	r := newRequest(&answer{}, nil)
	close(r.release)
	for range 3 {
		_, _, err := g.Do(context.Background(), k, r.fetch, r.dup, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, before+3, g.Generation(k))
	assert.Equal(t, beforeOther, g.Generation(other), "a key of another slot")
	assert.Equal(t, g.Generation(k), g.Generation(strings.Clone(k)), "the same key, another string")
}
