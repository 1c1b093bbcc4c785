package synthient

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient/retry"
)

// How identical billed lookups share one request (LookupIP, LookupDomain).
//
// The first call of a key (its cache key) is the flight's leader: it
// sends the request, and every identical call made before the answer
// joins the flight and waits for it instead of sending its own. When the
// answer comes, each caller gets it: the leader the value decoded, the
// others a copy of their own; an error is shared as it is (errors are
// never changed once built). The copies are made before any caller gets
// the answer, so that no caller's changes to its own can race with them.
//
// Each caller waits with its own context. One whose context ends leaves
// the flight at once, with its context's error; the request goes on for
// those still waiting. The last caller to leave cancels the request with
// its context's error and waits for it to stop, so that it gets what a
// lone caller would: the cancelled request's error, which says whether it
// may have reached the API. The request's context has the leader's values,
// is cancelled only then, and has as its deadline the latest of its
// callers' (none if one has none), so that pacing and the retry policy
// plan for the caller who waits longest.
//
// A leader whose context can never end (ctx.Done() is nil) sends the
// request on its own goroutine with its own context: it cannot leave, so
// the request is never cancelled. Otherwise the request goes on a
// goroutine of the flight, and when the leader leaves first its observed
// call (see Observer) is ended by the flight once the request is done, so
// that the call's requests are reported before its end. A panic there is
// the leader's, as it would be on its own goroutine.

// flights are a client's lookups in flight of one kind, by key.
type flights[T any] struct {
	mu sync.Mutex
	m  map[string]*flight[T]
	// ended counts the flights that ended, by a hash of their key: a
	// call that looked in the cache before a flight of its key ended
	// (the count changed) looks again before it sends (see Generation).
	ended [64]atomic.Uint32
}

// Generation returns a count that changes when a flight of key ends.
func (g *flights[T]) Generation(key string) uint32 {
	return g.ended[slot(key)].Load()
}

// slot returns the index of key's count in flights.ended (FNV-1a).
func slot(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return int(h % 64)
}

// flight is one request in flight and the calls that share it.
type flight[T any] struct {
	key  string
	op   string          // the method, for errors
	ctx  context.Context // the request's
	fc   *flightContext  // ctx, when the request runs on a goroutine of its own
	done chan struct{}   // closed once the result is set; made for the first caller to wait (guarded by flights.mu until then)

	// Guarded by flights.mu.
	waiting    int    // callers not gone, the leader among them unless leaderLeft
	leaderLeft bool   // the leader left before the answer
	finished   bool   // no caller joins or leaves any more
	endOwner   func() // ends the leader's observed call, once it left
	owner      *observedCall

	// Set before done is closed.
	res      T
	err      error
	copies   []T          // of res, one for each caller but the leader
	taken    atomic.Int32 // copies taken
	panicked *caught      // the panic the request's goroutine caught
}

// share returns the answer of fetch for key, sharing the request of an
// identical call in flight (see the comment above). op names the method,
// call is the caller's observed call, and dup copies an answer for a
// caller other than the leader.
func share[T any](ctx context.Context, g *flights[T], call *observedCall, op, key string,
	fetch func(context.Context) (T, error), dup func(T) T) (T, error) {
	if err := ctx.Err(); err != nil {
		// As do would: nothing is sent for a call whose context ended (the
		// flight's context would not have).
		var zero T
		return zero, stopError(meta{op: op, reason: retry.ContextDone}, err, nil)
	}
	f, leader := g.join(ctx, key, op, call)
	if leader && f.fc == nil {
		return g.send(f, fetch, dup)
	}
	if leader {
		go g.fly(f, fetch, dup)
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		if !g.leave(f, ctx.Err(), leader) {
			var zero T
			return zero, leftError(op, ctx.Err())
		}
		<-f.done
	}
	if f.panicked != nil && leader {
		panic(f.panicked.value) // on the goroutine of the call that sent, as without sharing
	}
	if leader || f.err != nil {
		return f.res, f.err
	}
	call.coalesced(1)
	return f.copies[f.taken.Add(1)-1], nil
}

// fly sends the request of f on the flight's goroutine. A panic in it (a
// response hook's, an observer's) is caught and handed to the leader,
// which panics with it (unless it has left: then no goroutine is left to
// panic on but this one, which would end the program); the others get an
// *Error that says so.
func (g *flights[T]) fly(f *flight[T], fetch func(context.Context) (T, error), dup func(T) T) {
	defer func() {
		if p := recover(); p != nil {
			f.panicked = &caught{p}
			var zero T
			g.finish(f, zero, opError(meta{op: f.op}, "the call that sent the shared request panicked", nil), dup)
		}
	}()
	res, err := fetch(f.ctx)
	g.finish(f, res, err, dup)
}

// send sends the request of f on the leader's goroutine. A panic in it
// goes on, on that goroutine, as without sharing; the flight is finished
// first, the others getting an *Error that says so, so that no call of
// the key waits for it ever after.
func (g *flights[T]) send(f *flight[T], fetch func(context.Context) (T, error), dup func(T) T) (res T, err error) {
	finished := false
	defer func() {
		if !finished {
			var zero T
			g.finish(f, zero, opError(meta{op: f.op}, "the call that sent the shared request panicked", nil), dup)
		}
	}()
	res, err = fetch(f.ctx)
	finished = true
	g.finish(f, res, err, dup)
	return res, err
}

// caught is a panic's value.
type caught struct{ value any }

// join adds a caller with ctx to the flight of key, starting it (for the
// method op) if there is none; leader reports that it did.
func (g *flights[T]) join(ctx context.Context, key, op string, call *observedCall) (f *flight[T], leader bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.m[key]; f != nil {
		f.waiting++
		f.fc.join(ctx)
		if f.done == nil {
			f.done = make(chan struct{})
		}
		return f, false
	}
	f = &flight[T]{key: key, op: op, ctx: ctx, waiting: 1, owner: call}
	if ctx.Done() != nil {
		// The request runs on a goroutine of its own, which the leader
		// waits for; a leader that sends it itself waits for nothing.
		f.fc = newFlightContext(ctx)
		f.ctx = f.fc
		f.done = make(chan struct{})
	}
	if g.m == nil {
		g.m = map[string]*flight[T]{}
	}
	g.m[key] = f
	return f, true
}

// finish sets the flight's result, lets its callers go, and ends the
// leader's observed call if the leader left. Each caller but the leader
// gets a copy of res, made by dup before any caller goes: the leader's
// caller may change res once it has it.
func (g *flights[T]) finish(f *flight[T], res T, err error, dup func(T) T) {
	g.mu.Lock()
	f.finished = true // from now on no caller joins or leaves
	if g.m[f.key] == f {
		// Counted before a later call can start a flight of its own:
		// it then sees the answer in the cache (stored by fetch).
		g.ended[slot(f.key)].Add(1)
		delete(g.m, f.key)
	}
	others := f.waiting
	if !f.leaderLeft {
		others--
	}
	end, done := f.endOwner, f.done
	g.mu.Unlock()
	f.res, f.err = res, err
	if err == nil && others > 0 {
		f.copies = make([]T, others)
		for i := range f.copies {
			f.copies[i] = dup(res)
		}
	}
	if done != nil {
		close(done)
	}
	if end != nil {
		end()
	}
}

// leave takes a caller whose context ended with cause out of the flight.
// It reports whether the caller is to wait for the result after all: the
// flight has finished, or the caller was the last, and the request is now
// cancelled. A leader that leaves first hands its observed call's end to
// the flight.
func (g *flights[T]) leave(f *flight[T], cause error, leader bool) (wait bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f.finished {
		return true
	}
	if f.waiting == 1 { // the last, who waits for the request to stop
		delete(g.m, f.key) // a later call starts afresh
		if f.fc != nil {
			f.fc.cancel(cause)
		}
		return true
	}
	f.waiting--
	if leader {
		f.leaderLeft = true
		f.endOwner = f.owner.handOff(leftError(f.op, cause))
	}
	return false
}

// leftError is the error of a caller that left a request it shared with
// other calls because its context ended with err: the request goes on for
// them.
func leftError(op string, err error) error {
	return opError(meta{op: op, reason: retry.ContextDone}, "left the request it shared with identical calls before the answer", err)
}

// flightContext is the context of a shared request that runs on a
// goroutine of its flight: the leader's values, cancelled by the last
// caller to leave (with that caller's context's error as its Err), and
// the latest deadline of its callers. Unlike a context's, its deadline can
// move later while it is in use: each reader (pacing, the retry policy,
// the dialer) takes the one in force when it reads.
type flightContext struct {
	context.Context // a cancelCtx, for Done and Value: the contexts derived from it need no goroutine
	cancel          context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time
	bounded  bool // every caller so far has a deadline
}

func newFlightContext(ctx context.Context) *flightContext {
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	fc := &flightContext{Context: base, cancel: cancel}
	fc.deadline, fc.bounded = ctx.Deadline()
	return fc
}

// join takes the deadline of a caller with ctx into account. It does
// nothing on a nil *flightContext (a leader who cannot leave).
func (fc *flightContext) join(ctx context.Context) {
	if fc == nil {
		return
	}
	d, ok := ctx.Deadline()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	switch {
	case !ok:
		fc.bounded = false
	case fc.bounded && d.After(fc.deadline):
		fc.deadline = d
	}
}

// Deadline returns the latest deadline of the callers so far.
func (fc *flightContext) Deadline() (time.Time, bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if !fc.bounded {
		return time.Time{}, false
	}
	return fc.deadline, true
}

// Err returns nil until the last caller left, then that caller's
// context's error.
func (fc *flightContext) Err() error {
	if fc.Context.Err() == nil {
		return nil
	}
	return context.Cause(fc.Context)
}
