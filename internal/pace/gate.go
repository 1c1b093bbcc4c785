package pace

import (
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// gate is the part of the model that holds attempts: this client's tokens,
// the queue of attempts waiting for a turn, and its counts of attempts.
// Only its methods write it.
type gate struct {
	// lim holds this client's tokens: the server's as far as they are
	// this client's, refilled at its share; nil until an answer stated
	// the bucket.
	lim *rate.Limiter
	// queue holds the attempts waiting for a turn, first first.
	queue []*waiter
	// news is closed, and cleared, when the model changes; nil while no
	// attempt waits for it.
	news chan struct{}
	// inflight counts the attempts let go and not yet answered or failed;
	// probing those of them that went as probes of the model's turns.
	inflight, probing int
	// slowStart is how many attempts may be in flight while the rate
	// gives no turns: one more for each success (as TCP's slow start),
	// so that a client learns whether others spend the bucket before it
	// spends it.
	slowStart int
	// sent counts the attempts let go, numbering them; ended those
	// answered or failed: those that ended during an attempt's flight
	// may have been counted after it by the server, and its answer's
	// Remaining does not show them; throttled the 429s answered.
	sent, ended, throttled uint64
	// answered is when the last answer came.
	answered time.Time
	// holdUntil is when a 429 of a bucket whose rate gives no turns lets
	// the next attempt go.
	holdUntil time.Time
	// confirmedUntil is when the last 429 stops confirming the model's
	// turns (see late).
	confirmedUntil time.Time
}

// waiter is an attempt in the queue; ch is signalled when it may have its
// turn, or its turn moved.
type waiter struct {
	ch chan struct{}
}

// wake signals w, without waiting.
func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// step is what the model tells an attempt to do: go now (sent), stop
// (late), or sleep at most sleep (zero: with no limit but the context's),
// or until its patience ends (patience), or until wake is signalled, then
// ask again. news reports that wake is the model's news: when it comes,
// the attempt's patience starts again.
type step struct {
	sent   bool
	ticket Ticket
	// late reports that the attempt's turn comes after its deadline: it
	// does not go.
	late bool
	// wait is the hold the attempt is in, or would be in: the time to its
	// turn; hold reports that it is one to report (the first step of a
	// wait in the queue, or a held bucket); shared that the wait is
	// longer than the bucket's rate alone asks.
	wait     time.Duration
	hold     bool
	shared   bool
	sleep    time.Duration
	patience bool
	wake     <-chan struct{}
	news     bool
	// waiter is the attempt's place in the queue, to give take again.
	waiter *waiter
}

// send counts an attempt that goes at now, of ticket t, in flight.
func (g *gate) send(now time.Time, t Ticket) step {
	g.inflight++
	g.sent++
	t.seq, t.ended, t.at = g.sent, g.ended, now
	if t.probe {
		g.probing++
	}
	return step{sent: true, ticket: t}
}

// land ends the flight of the attempt of t.
func (g *gate) land(t Ticket) {
	g.inflight--
	if t.probe {
		g.probing--
	}
}

// heard takes in an answer of status at now: a 429 confirms the model's
// turns, whatever its Retry-After; a success lets one more attempt be in
// flight in slow start.
func (g *gate) heard(now time.Time, status int) {
	g.answered = now
	switch {
	case status == tooMany:
		g.throttled++
		g.confirmedUntil = now.Add(confirmFor)
	case status/100 == 2:
		g.slowStart = max(g.slowStart, maxProbes) + 1
	}
}

// held is the step of an attempt while a 429 holds the bucket: it sleeps
// until then, and is late when that is after deadline.
func (g *gate) held(now, deadline time.Time) step {
	wait := g.holdUntil.Sub(now)
	return step{wait: wait, hold: true, sleep: wait, late: !deadline.IsZero() && g.holdUntil.After(deadline)}
}

// probe is the step of an attempt while the rate gives no turns: it goes
// at once on a token in slow start; as a probe while fewer than maxProbes
// are in flight, or once it is not patient; else it waits for news, at
// most until its patience ends. Its ticket has no token: the tokens of a
// model that gives no turns are Remaining as last heard, which the
// attempts in flight race for, so that a 429 to one says nothing of other
// clients.
func (g *gate) probe(now time.Time, patient bool) step {
	switch {
	case g.lim != nil && g.inflight < g.slowStart && g.lim.AllowN(now, 1):
		return g.send(now, Ticket{})
	case g.inflight < maxProbes || !patient:
		return g.send(now, Ticket{})
	}
	return step{wake: g.newsChan(), news: true, patience: true}
}

// probeTurn lets an attempt go at now as a probe of the model's turns,
// one at a time: while one is in flight, it waits for its answer.
func (g *gate) probeTurn(now time.Time) step {
	if g.probing > 0 {
		return step{wake: g.newsChan(), news: true}
	}
	return g.send(now, Ticket{probe: true})
}

// newsChan returns the channel news closes.
func (g *gate) newsChan() <-chan struct{} {
	if g.news == nil {
		g.news = make(chan struct{})
	}
	return g.news
}

// join puts w in the queue, a new waiter when w is nil, and returns it and
// its place.
func (g *gate) join(w *waiter) (*waiter, int) {
	if w == nil {
		w = &waiter{ch: make(chan struct{}, 1)}
		g.queue = append(g.queue, w)
	}
	return w, slices.Index(g.queue, w)
}

// turnIn returns the time from now to the turn of the attempt k-th in the
// queue, at share (wait) and at the bucket's whole rate, full (best): when
// the model holds a token for each attempt up to it, and a margin of half
// a token of the server's, a cushion for the jitter of timers and
// networks, and at most what the model can hold beyond the token (limit
// less 1). ok is false when best is past maxHold. The lack of tokens is
// in seconds first: as a rate of a token an age would overflow a
// Duration.
func (g *gate) turnIn(now time.Time, k int, share, full rate.Limit, limit int, maxHold time.Duration) (wait, best time.Duration, ok bool) {
	margin := min(0.5*float64(share/full), float64(limit-1))
	lack := float64(k) + 1 + margin - g.lim.TokensAt(now)
	secs, bestSecs := lack/float64(share), lack/float64(full)
	if !(bestSecs <= maxHold.Seconds()) {
		return 0, 0, false
	}
	wait = time.Duration(math.Ceil(min(secs, maxHold.Seconds()) * float64(time.Second)))
	return wait, time.Duration(math.Ceil(bestSecs * float64(time.Second))), true
}

// queued is the step of the attempt w, k-th in the queue, whose turn is
// wait away: the first in the queue sleeps until its turn, at most reask,
// as its turn moves with the share and its patience; the others until
// woken. first reports the attempt's first step, whose hold is reported.
func (g *gate) queued(w *waiter, k int, wait time.Duration, first, shared bool) step {
	s := step{wait: wait, hold: first, shared: shared, wake: w.ch, waiter: w}
	if k == 0 {
		s.sleep = min(wait, reask)
	}
	return s
}

// leave takes w out of the queue, if it is there; a new first is woken.
func (g *gate) leave(w *waiter) {
	i := slices.Index(g.queue, w)
	if i < 0 {
		return
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	if i == 0 && len(g.queue) > 0 {
		g.queue[0].wake()
	}
}

// wakeAll wakes every attempt in the queue: their turns moved.
func (g *gate) wakeAll() {
	for _, w := range g.queue {
		w.wake()
	}
}

// notify wakes the attempts waiting for news, and the first in the queue.
func (g *gate) notify() {
	if g.news != nil {
		close(g.news)
		g.news = nil
	}
	if len(g.queue) > 0 {
		g.queue[0].wake()
	}
}

// fit brings the model's tokens at now down to target; while the rate
// gives no turns (raise), also up to up: the model does not refill
// itself then. When whole is set, the rate starts giving turns: the part
// of a token the model holds beyond its whole tokens goes too, as the
// server's part of a token is not known.
func (g *gate) fit(now time.Time, target, up int, raise, whole bool) {
	tokens := g.lim.TokensAt(now)
	n := int(tokens)
	if whole {
		n = int(math.Ceil(tokens))
	}
	switch {
	case n > target:
		g.lim.ReserveN(now, n-target) // never acted on: taken from the model
		g.wakeAll()
	case raise:
		// Taking a negative count gives tokens back (rate.Limiter has
		// no setter); taking 0 changes nothing.
		g.lim.AllowN(now, min(n-up, 0))
	}
}

// drain takes every whole token of the model at now, for a 429: the
// server had none; while the model gives turns (paced), one more, which
// is never acted on: a turn left to the server, so that it gets ahead of
// the attempts again. Else the bucket is held for retryAfter.
func (g *gate) drain(now time.Time, retryAfter time.Duration, paced bool) {
	if g.lim != nil {
		g.lim.AllowN(now, max(int(g.lim.TokensAt(now)), 0))
	}
	if paced {
		g.lim.ReserveN(now, 1)
		g.wakeAll()
		return
	}
	if until := now.Add(retryAfter); until.After(g.holdUntil) {
		g.holdUntil = until
	}
}
