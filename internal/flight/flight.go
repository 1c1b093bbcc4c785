// Package flight shares one request among identical calls in flight: the
// client's billed lookups (LookupIP, LookupDomain), so that calls made
// while an identical one waits for its answer are charged once.
//
// The model. A Group holds the flights of one kind of request, by key.
// The first caller of a key (Do) is the flight's leader: its fetch sends
// the request. Every caller of the key that comes before the answer joins
// the flight and waits for it instead of sending its own. When the answer
// comes, each caller gets it: the leader the value fetch returned (Sent),
// the others a copy of their own, made by dup (Shared); an error is shared
// as it is. The copies are made before any caller gets the answer, so that
// no caller's changes to its own can race with them. Once a flight ended,
// the next caller of its key starts a new one, and the count Generation
// reads has moved: a caller that looked in a cache before that can look
// again before it sends.
//
// Each caller waits with its own context. One whose context ends leaves
// the flight at once (Left, with its context's error), and the request
// goes on for those still waiting. The last caller to leave cancels the
// request, with its context's error as the cause, and waits for it to
// stop, so that it gets what a lone caller would: the cancelled request's
// result. A leader that leaves first hands the end of its call to the
// flight (Owner), which ends it once the request is done.
//
// The request's context has the leader's values and no deadline: it ends
// only when every caller has left, so a flight outlives the deadline of
// any caller but the last. What plans waits (a retry policy, rate-limit
// pacing) asks Planning for the context to plan with: the request's, with
// the latest deadline of the callers waiting when it asks (none when one of
// them has none), so that it plans for the caller who waits longest. Each
// context keeps the context.Context contract: its Deadline never changes.
//
// A leader whose context can never end (ctx.Done() is nil) cannot leave:
// fetch runs on its goroutine with its context, and nothing is cancelled.
// Otherwise fetch runs on a goroutine of the flight. A panic in fetch goes
// on in the leader, on its own goroutine (unless it left: then the panic
// is caught, as nothing is left to panic on); the others get ErrPanicked.
// Either way the flight ends, so that no later caller waits for it.
package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Outcome says how a caller of Do got its result.
type Outcome uint8

const (
	// Sent means the caller led the flight: the result is its fetch's.
	Sent Outcome = iota
	// Shared means the caller shared another's request: the result is a
	// copy of its answer, or its error.
	Shared
	// Left means the caller's context ended before the answer: the error
	// is the context's, and the request goes on for the others.
	Left
)

// ErrPanicked is the error of the callers who shared a request whose fetch
// panicked.
var ErrPanicked = errors.New("flight: the call that sent the shared request panicked")

// Owner is the leader's call, which the flight ends when the leader leaves
// before the answer.
type Owner interface {
	// HandOff is called, with the group's lock held, when the leader leaves
	// first, its context having ended with cause. It returns the function
	// that ends the leader's call, which the flight calls once the request
	// is done and its result set.
	HandOff(cause error) (end func())
}

// Group holds the flights of one kind of request, by key. The zero value
// is ready for use; a Group must not be copied after first use. Its methods
// are safe for concurrent use.
type Group[T any] struct {
	mu sync.Mutex
	m  map[string]*flight[T]
	// ended counts the flights that ended, by a hash of their key (see
	// Generation).
	ended [slots]atomic.Uint32
}

// slots is the number of counts of ended flights.
const slots = 64

// Generation returns a count that changes when a flight of key ends. A
// caller that reads it before it looks in a cache and finds it changed
// when it leads a flight knows that an identical request was answered
// meanwhile (and its answer perhaps stored).
func (g *Group[T]) Generation(key string) uint32 {
	return g.ended[slot(key)].Load()
}

// slot returns the index of key's count in Group.ended: FNV-1a.
func slot(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return int(h % slots)
}

// flight is one request in flight and the callers that share it.
type flight[T any] struct {
	key  string
	ctx  context.Context // the request's
	fc   *flightContext  // ctx, when the request runs on a goroutine of the flight
	done chan struct{}   // closed once the result is set; made for the first caller to wait

	// Guarded by Group.mu.
	waiting    int    // callers not gone, the leader among them unless leaderLeft
	leaderLeft bool   // the leader left before the answer
	finished   bool   // no caller joins or leaves any more
	owner      Owner  // the leader's call; nil for none
	endOwner   func() // ends the leader's call, once it left

	// Set before done is closed.
	res      T
	err      error
	copies   []T          // of res, one for each caller but the leader
	taken    atomic.Int32 // copies taken
	panicked *caught      // the panic fetch raised on the flight's goroutine
}

// caught is a panic's value.
type caught struct{ value any }

// Do returns the result of fetch for key, sharing the request of a flight
// of key in flight (see the package documentation). dup copies an answer
// for a caller other than the leader; owner is the caller's call, ended by
// the flight if the caller leads and leaves first (nil for none). fetch is
// given the request's context.
func (g *Group[T]) Do(ctx context.Context, key string, fetch func(context.Context) (T, error), dup func(T) T, owner Owner) (T, Outcome, error) {
	f, leader := g.join(ctx, key, owner)
	if leader && f.fc == nil {
		res, err := g.send(f, fetch, dup)
		return res, Sent, err
	}
	if leader {
		go g.fly(f, fetch, dup)
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		if !g.leave(f, ctx.Err(), leader) {
			var zero T
			return zero, Left, ctx.Err()
		}
		<-f.done
	}
	return f.result(leader)
}

// result returns the flight's result to a caller: the leader's own (or its
// panic), or a copy of the answer, or the error.
func (f *flight[T]) result(leader bool) (T, Outcome, error) {
	var zero T
	switch {
	case leader && f.panicked != nil:
		panic(f.panicked.value) // on the leader's goroutine, as without sharing
	case leader:
		return f.res, Sent, f.err
	case f.err != nil:
		return zero, Shared, f.err
	}
	return f.copies[f.taken.Add(1)-1], Shared, nil
}

// join adds a caller with ctx to the flight of key, starting it with the
// caller as its leader, and owner as the leader's call, if there is none;
// leader reports that it did.
func (g *Group[T]) join(ctx context.Context, key string, owner Owner) (f *flight[T], leader bool) {
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
	f = &flight[T]{key: key, ctx: ctx, waiting: 1, owner: owner}
	if ctx.Done() != nil {
		// The request runs on a goroutine of the flight, which the leader
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

// fly runs fetch on the flight's goroutine. A panic in it is caught and
// kept for the leader, which panics with it unless it left; the others get
// ErrPanicked.
func (g *Group[T]) fly(f *flight[T], fetch func(context.Context) (T, error), dup func(T) T) {
	defer func() {
		if p := recover(); p != nil {
			f.panicked = &caught{p}
			var zero T
			g.finish(f, zero, ErrPanicked, dup)
		}
	}()
	res, err := fetch(f.ctx)
	g.finish(f, res, err, dup)
}

// send runs fetch on the leader's goroutine. A panic in it goes on, on that
// goroutine; the flight is finished first, the others getting ErrPanicked,
// so that no caller of the key waits for it ever after.
func (g *Group[T]) send(f *flight[T], fetch func(context.Context) (T, error), dup func(T) T) (res T, err error) {
	finished := false
	defer func() {
		if !finished {
			var zero T
			g.finish(f, zero, ErrPanicked, dup)
		}
	}()
	res, err = fetch(f.ctx)
	finished = true
	g.finish(f, res, err, dup)
	return res, err
}

// finish sets the flight's result, lets its callers go, and ends the
// leader's call if the leader left. Each caller but the leader gets a copy
// of res, made by dup before any caller goes: the leader may change res
// once it has it.
func (g *Group[T]) finish(f *flight[T], res T, err error, dup func(T) T) {
	g.mu.Lock()
	f.finished = true // from now on no caller joins or leaves
	if g.m[f.key] == f {
		// Counted before a later caller can start a flight of its own.
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
	if err == nil {
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
// cancelled. A leader that leaves first hands its call's end to the
// flight.
func (g *Group[T]) leave(f *flight[T], cause error, leader bool) (wait bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f.finished {
		return true
	}
	if f.waiting == 1 { // the last, who waits for the request to stop
		delete(g.m, f.key) // a later caller starts afresh
		f.fc.cancel(cause)
		return true
	}
	f.waiting--
	if leader {
		f.leaderLeft = true
		if f.owner != nil {
			f.endOwner = f.owner.HandOff(cause)
		}
	}
	return false
}
