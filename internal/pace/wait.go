package pace

import (
	"context"
	"time"
)

// Hold is a hold of an attempt by the model.
type Hold struct {
	// Wait is the time to the attempt's turn.
	Wait time.Duration
	// Shared reports a hold for the team: longer than the bucket's rate
	// alone asks, because this client's share of the rate is less than
	// the rate, other clients spending the bucket too.
	Shared bool
	// Err is the context's error when the context ended during the hold.
	Err error
}

// Wait holds the next attempt of the bucket until the model lets it go,
// and returns its Ticket, which Answer or Release takes back. A turn more
// than maxHold away is not waited for: the attempt goes at once. report
// is called, on the calling goroutine, when a hold starts.
//
// When the attempt does not go, Wait reports false with the hold: its turn
// comes after ctx's deadline (Err nil), or ctx ended during the hold (Err
// is ctx's error). The attempt then holds no place in the model.
func (b *Bucket) Wait(ctx context.Context, maxHold time.Duration, report func(Hold)) (Ticket, Hold, bool) {
	deadline, _ := ctx.Deadline()
	var (
		w        *waiter   // the attempt's place in the queue
		patience time.Time // the end of its wait for news
	)
	for {
		now := time.Now()
		if patience.IsZero() {
			patience = now.Add(probeWait)
		}
		s := b.take(now, w, now.Before(patience), deadline, maxHold)
		w = s.waiter
		h := Hold{Wait: s.wait, Shared: s.shared}
		switch {
		case s.sent:
			return s.ticket, Hold{}, true
		case s.late:
			return Ticket{}, h, false
		case s.hold:
			report(h)
		}
		if s.patience {
			s.sleep = patience.Sub(now)
		}
		switch sleep(ctx, s.sleep, s.wake) {
		case ended:
			b.abandon(w)
			h.Err = ctx.Err()
			return Ticket{}, h, false
		case woken:
			if s.news {
				patience = time.Time{} // news came: the wait for the next starts
			}
		}
	}
}

// Sleep waits d, or returns ctx's error if ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	if sleep(ctx, d, nil) == ended {
		return ctx.Err()
	}
	return nil
}

// wakeUp is why a sleep ended.
type wakeUp uint8

const (
	timedOut wakeUp = iota // its time passed
	woken                  // its wake channel was signalled
	ended                  // its context ended
)

// sleep waits d (with no limit when d is 0), until wake is signalled, or
// until ctx ends, and returns which.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) wakeUp {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return timedOut
	case <-wake:
		return woken
	case <-ctx.Done():
		return ended
	}
}

// abandon takes out of the queue an attempt that will not go, at w.
func (b *Bucket) abandon(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate.leave(w)
}

// take decides, at now, what an attempt does; w is its place in the
// queue, nil before it has one. patient reports that the attempt may
// still wait for news; deadline, when not zero, is the attempt's: a turn
// after it is not waited for, nor one more than maxHold away.
func (b *Bucket) take(now time.Time, w *waiter, patient bool, deadline time.Time, maxHold time.Duration) step {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := &b.gate
	if now.Before(g.holdUntil) {
		g.leave(w)
		return g.held(now, deadline)
	}
	switch b.est.state {
	case unpaced:
		g.leave(w)
		return g.send(now, Ticket{})
	case suspect, shared, exact:
		return b.turn(now, w, patient, deadline, maxHold)
	}
	g.leave(w)
	return g.probe(now, patient)
}

// turn is take for a model that gives turns: an attempt goes at once when
// a token is left and none waits before it; else it waits in the queue,
// first in, first out, for its turn (see turnIn). A turn is a place in
// the queue: a change of share moves every turn at once.
//
// An attempt whose turn comes after its deadline leaves the queue (see
// lateTurn), and so does one of a suspect model that waited its patience
// out: it goes as a probe, whose answer ends the doubt. b.mu is held.
func (b *Bucket) turn(now time.Time, w *waiter, patient bool, deadline time.Time, maxHold time.Duration) step {
	g := &b.gate
	if w == nil && len(g.queue) == 0 && g.lim.AllowN(now, 1) {
		return g.send(now, Ticket{token: true})
	}
	b.advance(now)
	first := w == nil
	w, k := g.join(w)
	share, full := b.share(), b.est.rate
	wait, best, ok := g.turnIn(now, k, share, full, b.est.limit, maxHold)
	shared := share < full
	switch {
	case !ok:
		g.leave(w)
		return g.send(now, Ticket{})
	case wait <= 0 && k == 0:
		g.leave(w)
		g.lim.AllowN(now, 1)
		return g.send(now, Ticket{token: true})
	case late(now, deadline, wait, best, shared):
		g.leave(w)
		return g.lateTurn(now, wait, shared)
	case b.est.state == suspect && !patient:
		g.leave(w)
		return g.probeTurn(now)
	}
	return g.queued(w, k, wait, first, shared)
}

// late reports whether a turn wait from now (best at the bucket's whole
// rate) comes after deadline, when there is one. A turn for the team
// (shared) is a guess, as this client's share rises when others' fall:
// it is late only when even best is.
func late(now, deadline time.Time, wait, best time.Duration, shared bool) bool {
	if shared {
		wait = best
	}
	return !deadline.IsZero() && now.Add(wait).After(deadline)
}

// lateTurn is the step of an attempt whose turn, wait away, comes after
// its deadline. While a 429 confirms the model it stops (late). Else it
// goes, as a probe of the model (probeTurn): the server may have tokens
// the model does not know of (see evidence). A model of a shared bucket
// that heard nothing for a second is not confirmed by an older 429: its
// share came from an emptier bucket than there may be now.
func (g *gate) lateTurn(now time.Time, wait time.Duration, shared bool) step {
	stale := shared && now.Sub(g.answered) > time.Second
	if now.Before(g.confirmedUntil) && !stale {
		return step{wait: wait, late: true, shared: shared}
	}
	return g.probeTurn(now)
}
