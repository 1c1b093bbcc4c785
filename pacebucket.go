// The model of one rate-limit bucket, which a team shares.
//
// The API counts a team's requests in token buckets (api-v4.md §5): every
// key, process and host of the team draws on the same ones, and each
// answer says where the bucket stands (RateLimit-Limit, the burst;
// RateLimit-Remaining, the whole tokens left; RateLimit-Reset, the seconds
// until it is full again). A client learns the bucket's burst and rate
// from those headers, and takes its part of the rate, its share: all of it
// while nothing shows other clients, less when the headers show others
// spending the same tokens. Clients of a team never talk to each other;
// each measures the others from the tokens it did not spend, and they
// settle on shares that add up to the bucket's rate. See docs/retries.md,
// "Rate-limit pacing" and "A team on one rate limit".

package synthient

import (
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// paceBucket is the model of one bucket of the server's. Its methods are
// safe for concurrent use; the zero value knows nothing yet.
type paceBucket struct {
	mu sync.Mutex

	// lim holds this client's tokens: the server's as far as they are
	// this client's, refilled at share; nil until an answer carried the
	// RateLimit headers.
	lim *rate.Limiter
	// limit is the burst the server last said (RateLimit-Limit); rate the
	// bucket's refill, the team's: the largest deficit per second until
	// full, (Limit - Remaining) / Reset, of the answers since, or the
	// rate the server was seen to grant (see evidence). It is trusted
	// once an answer said the bucket was spent (Remaining 0, drained):
	// then the deficit is the whole burst, and the estimate exact up to
	// Reset's rounding. From a partly spent bucket it is too low, and
	// pacing by it would keep the bucket from ever being spent; but it is
	// trusted too while other clients are seen to spend the bucket, which
	// they do not leave unspent (exact says which).
	limit   int
	rate    rate.Limit
	drained bool
	// exact reports that the rate was learnt from a spent bucket (an
	// answer said Remaining 0, or successes proved it: see evidence);
	// else it is a lower bound, which a client sharing the bucket raises
	// while the bucket holds more than lowWater (see advance).
	exact bool
	// share is the part of rate this client takes: rate while it sees no
	// other client, and while it does, a part that falls as the bucket
	// runs low and rises as it fills (see adapt).
	share rate.Limit
	// othersAt is when the model last saw other clients spend the
	// bucket's tokens (see measure); adapted when share last adapted;
	// answered when the last answer came.
	othersAt, adapted, answered time.Time
	// part is this client's part of what the team spent in the last
	// window measured (1 when it saw no other client).
	part float64
	// integral is the logarithm of the share the team's bucket steers
	// this client to, without the proportional part; err is the last
	// answer's error, which drives it until errUntil (see adapt).
	integral, err float64
	errUntil      time.Time
	// unpaced records that the last answer had no RateLimit headers: a
	// server that sends none is never slowed.
	unpaced bool
	// holdUntil is when a 429 of a bucket with no trusted rate lets the
	// next attempt go.
	holdUntil time.Time
	// confirmedUntil is when the last 429 stops confirming the model:
	// until then an attempt whose turn comes after its deadline stops;
	// after it, one such attempt at a time goes, as a probe of the model
	// (see turn), as it does for a shared bucket that heard nothing for a
	// second.
	confirmedUntil time.Time

	// inflight counts the attempts let go and not yet answered or
	// failed; probing those that went as probes of an unconfirmed model.
	inflight, probing int
	// slowStart is how many attempts may be in flight while the rate is
	// not trusted: one more for each success (as TCP's slow start), so
	// that a client learns whether others spend the bucket before it
	// spends it.
	slowStart int
	// ended counts the attempts answered or failed so far: those that
	// ended during an attempt's flight are those the server may have
	// counted after it, and its answer's Remaining not (see observe).
	// sent counts the attempts let go, numbering them; throttled the
	// 429s answered.
	ended, sent, throttled uint64
	// ref is where the window over which the team's spending is measured
	// began.
	ref teamPoint
	// firstDeficit and firstSent are the first answer's deficit (Limit
	// less Remaining) and sent then (see observe).
	firstDeficit int
	firstSent    uint64
	// runN counts the successes answered Remaining 0 within runWindow of
	// runFrom, the earliest time one of them went (see evidence).
	runN    int
	runFrom time.Time

	// queue holds the attempts waiting for a turn of a trusted model,
	// first first.
	queue []*waiter
	// news is closed, and cleared, when the model changes; nil while no
	// attempt of a model without a trusted rate waits for it.
	news chan struct{}
}

// Constants of the model (docs/retries.md, "A team on one rate limit").
const (
	// maxProbes is the most attempts in flight while nothing is known of
	// a bucket, or while its rate is not known and the model has no
	// token: one, so that the clients of a team that start together
	// learn of each other before they spend the bucket.
	maxProbes = 1
	// excessSlack is how many tokens the team may spend in a window
	// beyond this client's without that being evidence of other
	// clients: Remaining is rounded down, and the window's ends are
	// estimates.
	excessSlack = 1.5
	// minShare is the least fraction of rate a share falls to.
	minShare = 1.0 / 256
	// adapt steers a shared bucket toward lowWater of its burst, with
	// the gains gainI (integral, per second) and gainP (proportional) on
	// the logarithm of share, and a pull of leak per second toward the
	// whole rate; fairness is how much faster a client that spends a
	// larger part of the bucket cuts its share.
	lowWater = 0.4
	gainI    = 3.0
	gainP    = 2.0
	leak     = 0.3
	fairness = 4
	// othersFor is how long the sight of other clients lasts: after it
	// with no new sight, the client takes the whole rate again.
	othersFor = 3 * time.Second
	// runWindow bounds the successes that evidence compares.
	runWindow = 5 * time.Second
	// errFor is how long an answer's error drives the share (see
	// advance).
	errFor = time.Second
	// reask is how often the first attempt in the queue of a shared
	// bucket asks for its turn again, as the share moves.
	reask = 100 * time.Millisecond
	// confirmFor is how long a 429 confirms the model (see turn).
	confirmFor = 10 * time.Second
)

// teamPoint is one answer's place in the measure of the team's spending:
// when the server counted its request (estimated), the tokens it said
// were left, and this client's counts of attempts and 429s then.
type teamPoint struct {
	at             time.Time
	remaining      int
	seq, throttled uint64
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

// ticket is what the model notes of an attempt it lets go, for its answer.
type ticket struct {
	// seq numbers the attempt among those the bucket let go; ended is
	// the bucket's count of ended attempts when it went.
	seq, ended uint64
	// at is when it went.
	at time.Time
	// probe reports that it went as a probe of a model whose turn for
	// it was past its deadline.
	probe bool
	// token reports that it went on a token of the model's: a 429 to
	// it is one the model did not expect.
	token bool
}

// step is what the model tells an attempt to do: go now (sent), stop
// (late), or sleep at most sleep (zero: with no limit but the context's;
// negative: at most until the attempt's patience ends) or until wake is
// signalled, then ask again.
type step struct {
	sent   bool
	ticket ticket
	// late reports that the attempt's turn, wait away, comes after its
	// deadline: it does not go.
	late bool
	// wait is the hold the attempt is in, or would be in: the time to its
	// turn; hold reports that it is one to report (the first step of a
	// wait in the queue, or a held bucket); shared that the wait is
	// longer than the bucket's rate alone asks, because this client's
	// share of it is less than its rate.
	wait   time.Duration
	hold   bool
	shared bool
	sleep  time.Duration
	wake   <-chan struct{}
	// waiter is the attempt's place in the queue, to give take again.
	waiter *waiter
}

// trusted reports whether the model's rate is known well enough to give
// turns by. b.mu is held.
func (b *paceBucket) trusted() bool {
	return b.lim != nil && b.rate > 0 && b.drained
}

// take decides, at now, what an attempt of the bucket does; w is its
// place in the queue, nil before it has one. patient reports that the
// attempt may still wait for a probe's answer; deadline, when not zero, is
// the attempt's: a turn after it is not waited for. A turn more than
// maxHold away is not waited for either: the attempt goes at once.
func (b *paceBucket) take(now time.Time, w *waiter, patient bool, deadline time.Time, maxHold time.Duration) step {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.holdUntil) {
		b.leave(w)
		wait := b.holdUntil.Sub(now)
		return step{wait: wait, hold: true, sleep: wait, late: !deadline.IsZero() && b.holdUntil.After(deadline)}
	}
	switch {
	case b.unpaced:
		b.leave(w)
		return b.send(now, step{})
	case b.trusted():
		return b.turn(now, w, deadline, maxHold)
	case b.lim != nil && b.inflight < b.slowStart && b.lim.AllowN(now, 1):
		b.leave(w)
		return b.send(now, step{ticket: ticket{token: true}}) // a token is left: no wait
	case b.inflight < maxProbes || !patient:
		b.leave(w)
		return b.send(now, step{}) // a probe
	}
	b.leave(w)
	if b.news == nil {
		b.news = make(chan struct{})
	}
	return step{wake: b.news, sleep: -1}
}

// turn is take for a trusted model: an attempt goes at once when a token
// is left and none waits before it; else it waits in the queue for its
// turn. The first in the queue goes once the model holds a token and a
// margin: half the time the server takes to refill a token, so that each
// attempt finds half a token more at the server than the model counts, a
// cushion for the jitter of timers and networks. The queue is first in,
// first out, and a turn is where the attempt stands in it: a change of
// share moves every turn at once.
//
// An attempt whose turn comes after its deadline leaves the queue. While
// a 429 confirms the model it stops; else one such attempt at a time goes
// at once, to probe it (the server may have tokens the model does not know
// of: see evidence), and the others wait for the probe's answer. b.mu is
// held.
func (b *paceBucket) turn(now time.Time, w *waiter, deadline time.Time, maxHold time.Duration) step {
	if w == nil && len(b.queue) == 0 && b.lim.AllowN(now, 1) {
		return b.send(now, step{ticket: ticket{token: true}})
	}
	b.advance(now)
	first := w == nil
	if first {
		w = &waiter{ch: make(chan struct{}, 1)}
		b.queue = append(b.queue, w)
	}
	k := slices.Index(b.queue, w)
	// The lack of tokens for the attempt's turn, with the margin, in
	// seconds at share (the wait) and at the bucket's whole rate (the
	// best case): in seconds first, as a rate of a token an age would
	// overflow a Duration.
	// The margin is at most what the model can hold beyond the token.
	margin := min(0.5*float64(b.share/b.rate), float64(b.limit-1))
	lack := float64(k) + 1 + margin - b.lim.TokensAt(now)
	secs, best := lack/float64(b.share), lack/float64(b.rate)
	if !(best <= maxHold.Seconds()) {
		b.leave(w)
		return b.send(now, step{})
	}
	wait := time.Duration(math.Ceil(min(secs, maxHold.Seconds()) * float64(time.Second)))
	if wait <= 0 && k == 0 {
		b.leave(w)
		b.lim.AllowN(now, 1)
		return b.send(now, step{ticket: ticket{token: true}})
	}
	shared := b.share < b.rate
	// A turn for the team is a guess: this client's share rises as
	// others' falls. Such a turn is too late only when even the bucket's
	// whole rate would come after the deadline; else the attempt waits,
	// at most until its deadline.
	late := wait
	if b.share < b.rate {
		late = time.Duration(math.Ceil(best * float64(time.Second)))
	}
	if !deadline.IsZero() && now.Add(late).After(deadline) {
		b.leave(w)
		// A model of a shared bucket that heard nothing for a second
		// is not confirmed by an older 429: its share came from an
		// emptier bucket than there may be now.
		stale := shared && now.Sub(b.answered) > time.Second
		switch {
		case now.Before(b.confirmedUntil) && !stale:
			return step{wait: wait, late: true, shared: shared}
		case b.probing > 0:
			// It waits for the probe's answer, at most until its
			// deadline, and asks again.
			if b.news == nil {
				b.news = make(chan struct{})
			}
			return step{wake: b.news}
		}
		b.probing++
		return b.send(now, step{ticket: ticket{probe: true}})
	}
	s := step{wait: wait, hold: first, shared: shared, wake: w.ch, waiter: w}
	if k == 0 {
		s.sleep = wait
		if shared {
			// The share moves with time: the turn is asked again.
			s.sleep = min(wait, reask)
		}
	}
	return s
}

// leave takes w out of the queue, if it is there; a new first is woken.
// b.mu is held.
func (b *paceBucket) leave(w *waiter) {
	if w == nil {
		return
	}
	i := slices.Index(b.queue, w)
	if i < 0 {
		return
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	if i == 0 && len(b.queue) > 0 {
		b.queue[0].wake()
	}
}

// wakeAll wakes every attempt in the queue: their turns moved. b.mu is
// held.
func (b *paceBucket) wakeAll() {
	for _, w := range b.queue {
		w.wake()
	}
}

// send counts the attempt of s, which goes at now, in flight. b.mu is
// held.
func (b *paceBucket) send(now time.Time, s step) step {
	b.inflight++
	b.sent++
	s.sent = true
	s.ticket.seq, s.ticket.ended, s.ticket.at = b.sent, b.ended, now
	return s
}

// land ends the flight of the attempt of t. b.mu is held.
func (b *paceBucket) land(t ticket) {
	b.inflight--
	if t.probe {
		b.probing--
	}
}

// abandon takes out of the queue an attempt that will not go, at w.
func (b *paceBucket) abandon(w *waiter) {
	b.mu.Lock()
	b.leave(w)
	b.mu.Unlock()
}

// release ends the flight of the attempt of t, which got no answer: the
// next attempt may probe.
func (b *paceBucket) release(t ticket) {
	b.mu.Lock()
	b.land(t)
	b.ended++
	b.notify()
	b.mu.Unlock()
}

// notify wakes the attempts waiting for news, and the first in the queue.
// b.mu is held.
func (b *paceBucket) notify() {
	if b.news != nil {
		close(b.news)
		b.news = nil
	}
	if len(b.queue) > 0 {
		b.queue[0].wake()
	}
}

// answer learns from the answer of the attempt of t, of status and with
// header h at now. throttled reports a 429 with a usable Retry-After of
// retryAfter.
func (b *paceBucket) answer(now time.Time, status int, h http.Header, t ticket, throttled bool, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.land(t)
	b.answered = now
	switch {
	case status == http.StatusTooManyRequests:
		// A 429 confirms the model's holds, whatever its Retry-After.
		b.throttled++
		b.confirmedUntil = now.Add(confirmFor)
	case status >= 200 && status < 300:
		b.slowStart = max(b.slowStart, maxProbes) + 1
	}
	limit, remaining, reset, ok := rateLimitOf(h)
	if ok {
		// Answers can come in another order than the server counted
		// the requests: the attempts that ended meanwhile may have taken
		// tokens after this one, which remaining does not show.
		stale := int(min(b.ended-t.ended, uint64(limit))) //nolint:gosec // rateLimitOf's limit is > 0, so the min fits an int
		b.observe(now, limit, remaining, reset, stale)
		if b.trusted() {
			b.measure(now, t, remaining)
			if status == http.StatusTooManyRequests && t.token {
				// The model counted a token the server did not have:
				// other clients spent it.
				b.othersAt = now
			}
			b.adapt(now, remaining)
		}
		if status >= 200 && status < 300 {
			b.succeeded(now, t, remaining)
		}
	}
	b.ended++
	// Headers the model cannot use (one missing, a limit of 0, not a
	// number) say no more than none: such a server is never slowed.
	b.unpaced = !ok
	if throttled {
		b.throttle(now, retryAfter)
	}
	b.notify()
}

// observe takes in one answer's RateLimit headers: the burst, the rate
// when this observation's deficit per second is the largest yet, whether
// the bucket was spent, and the tokens, brought down to remaining when the
// model holds more. Once the rate is trusted, never up: the model refills
// itself. Before, its rate is too low to refill it, and the attempts let
// go would empty it while the server's bucket stays full: remaining, less
// the attempts in flight and those that ended meanwhile (stale, the
// attempts that may have been counted after this one), raises it too.
// b.mu is held.
func (b *paceBucket) observe(now time.Time, limit, remaining int, reset time.Duration, stale int) {
	remaining = min(remaining, limit)
	target := remaining // the model's tokens at most
	switch {
	case b.lim == nil:
		b.lim, b.limit = rate.NewLimiter(0, limit), limit
		// The other probes in flight took no token of the model's, but
		// will take the server's.
		target = max(remaining-b.inflight, 0)
	case limit != b.limit:
		// A new limit: what was learnt of the old one no longer holds.
		b.lim.SetBurstAt(now, limit)
		b.limit, b.rate, b.share, b.drained, b.exact = limit, 0, 0, false, false
		b.ref, b.firstSent, b.runN = teamPoint{}, 0, 0
		b.wakeAll()
	}
	if d := limit - remaining; d > 0 && reset > 0 {
		b.learnRate(now, rate.Limit(float64(d)/reset.Seconds()))
		// Before the rate is trusted: the first answer's deficit is more
		// than this client's attempts (while tokens remain: a spent
		// bucket's rate is exact, and it has no tokens to keep), or the
		// deficit grew by more than them since, so other clients spend
		// the bucket. Its tokens are not this client's to spend at once:
		// it takes its part of the deficit's rate.
		if !b.drained {
			first := b.firstSent == 0
			if first {
				b.firstDeficit, b.firstSent = d, b.sent
			}
			others := first && remaining > 0 && float64(d)-float64(b.sent) >= excessSlack ||
				d-b.firstDeficit > int(b.sent-b.firstSent) //nolint:gosec // attempts let go since firstSent: sent only grows, and never past an int
			if others {
				b.drained, b.othersAt, b.part = true, now, float64(b.sent)/float64(d)
				b.setShare(now, b.rate*rate.Limit(b.part))
				// Its part of the tokens, and (below) of that part
				// again: the clients answered after this one are not in
				// d.
				target = int(float64(remaining) * b.part)
			}
		}
		if remaining == 0 {
			b.drained, b.exact = true, true
		}
	}
	if b.sharing(now) {
		// Of a bucket other clients spend, this client's part of the
		// tokens is its part of the rate.
		target = int(float64(target) * float64(b.share/b.rate))
	}
	switch n := int(b.lim.TokensAt(now)); {
	case n > target:
		b.lim.AllowN(now, n-target)
		b.wakeAll()
	case !b.trusted() && n < remaining-b.inflight-stale:
		// A negative n gives tokens back (rate.Limiter has no setter).
		b.lim.AllowN(now, n-(remaining-b.inflight-stale))
	}
}

// learnRate takes in r, a rate the bucket refills at least at: the
// model's rate rises to it, and so does share while it is not below the
// rate. b.mu is held.
func (b *paceBucket) learnRate(now time.Time, r rate.Limit) {
	if r <= b.rate {
		return
	}
	if b.share >= b.rate {
		b.share = r
	} else {
		b.share *= r / b.rate // the same part of it
	}
	b.integral += math.Log(float64(r / max(b.rate, r*minShare)))
	b.rate = r
	b.lim.SetLimitAt(now, b.share)
}

// setShare sets share to s, kept between rate*minShare and rate. b.mu is
// held.
func (b *paceBucket) setShare(now time.Time, s rate.Limit) {
	if b.clampShare(s) < b.share {
		b.wakeAll() // their turns moved back
	}
	b.putShare(now, s)
}

// putShare sets share to s, kept between rate*minShare and rate, and
// wakes no attempt. b.mu is held.
func (b *paceBucket) putShare(now time.Time, s rate.Limit) {
	b.share = b.clampShare(s)
	b.lim.SetLimitAt(now, b.share)
}

// clampShare returns s kept between rate*minShare and rate. b.mu is held.
func (b *paceBucket) clampShare(s rate.Limit) rate.Limit {
	return min(max(s, b.rate*minShare), b.rate)
}

// measureWindow returns the least time the team's spending is measured over:
// the time the bucket takes to refill half its burst, from a tenth of a
// second to one. A longer window would span a refill that may have filled
// the bucket, when the tokens it could not hold are not known.
func (b *paceBucket) measureWindow() time.Duration {
	w := time.Duration(0.5 * float64(b.limit) / float64(b.rate) * float64(time.Second))
	return min(max(w, 100*time.Millisecond), time.Second)
}

// measure takes the answer of the attempt of t, which said remaining, as
// the end of a window over which the team's spending is measured: the
// tokens the bucket held at the window's start, plus its refill, less
// remaining, less the attempts this client let go in the window, are the
// tokens other clients spent. When they spent some, the model has seen
// other clients. b.mu is held.
func (b *paceBucket) measure(now time.Time, t ticket, remaining int) {
	p := teamPoint{at: t.at.Add(now.Sub(t.at) / 2), remaining: remaining, seq: t.seq, throttled: b.throttled}
	if b.ref.seq == 0 || t.seq < b.ref.seq {
		if b.ref.seq == 0 {
			b.ref = p
		}
		return // the window's first answer, or one counted before its start
	}
	dt := p.at.Sub(b.ref.at)
	if dt < b.measureWindow() {
		return
	}
	ref := b.ref
	b.ref = p
	own := float64(p.seq-ref.seq) - float64(p.throttled-ref.throttled)
	// The tokens the window had: those at its start and its refill. A
	// refill past the burst is lost: when this client's own spending
	// leaves room for the bucket to fill, what the team spent is at least
	// the burst less remaining.
	avail := float64(ref.remaining) + float64(b.rate)*dt.Seconds()
	if avail-own > float64(b.limit) {
		avail = float64(b.limit)
	}
	used := avail - float64(remaining)
	if used-own >= excessSlack {
		b.othersAt = now
		b.part = min(max(own/used, 0), 1)
	} else {
		b.part = 1
		if used-own <= 0 {
			b.othersAt = time.Time{} // none at all: the sight of others was wrong, or is over
		}
	}
}

// adapt moves share for an answer that said remaining. While the model
// sees other clients, it steers the bucket toward lowWater of its burst:
// below, every client's share falls, above, it rises, at a speed set by
// how far the bucket is (proportional) and by how long it has been there
// (integral), on the logarithm of share, so that all the team's shares
// scale alike whatever their number. The answer's error drives the share
// until the next answer, for at most errFor (see advance). b.mu is held.
func (b *paceBucket) adapt(now time.Time, remaining int) {
	b.advance(now)
	if !b.sharing(now) {
		b.err, b.errUntil = 0, time.Time{}
		// A rate learnt only as a lower bound, from other clients'
		// spending, is not trusted once they are gone.
		b.drained = b.exact
		return
	}
	e := (float64(min(max(remaining, 0), b.limit)) - lowWater*float64(b.limit)) / float64(b.limit)
	if e < 0 {
		// The team spends too much: the clients that spend more of it
		// cut faster, so that the shares converge.
		e *= 1 + fairness*b.part
	}
	b.err, b.errUntil = e, now.Add(errFor)
	b.setShare(now, rate.Limit(math.Exp(b.integral+gainP*e)))
}

// advance moves share from when it last moved to now. The share moves
// with time, not with answers, so that a client that gets few answers
// (a small share) moves as fast as one that gets many: its logarithm's
// integral part is driven by the last answer's error until errUntil, and
// pulled toward the whole rate, at leak per second while the model sees
// other clients (the pull makes the shares converge on equal parts, and
// lifts a share too small to be answered often), at 1 per second when it
// does not. The proportional part holds while the error does. b.mu is
// held.
func (b *paceBucket) advance(now time.Time) {
	if b.adapted.IsZero() {
		b.integral, b.adapted = math.Log(float64(b.share)), now
		return
	}
	if !now.After(b.adapted) || b.rate <= 0 {
		return
	}
	full := math.Log(float64(b.rate))
	pull := leak
	if !b.sharing(now) {
		pull = 1
	}
	from := b.adapted
	if b.errUntil.After(from) {
		to := b.errUntil
		if now.Before(to) {
			to = now
		}
		b.integral = relax(b.integral, full, pull, gainI*b.err, to.Sub(from).Seconds())
		from = to
	}
	b.integral = relax(b.integral, full, pull, 0, now.Sub(from).Seconds())
	if !b.exact && b.integral > full {
		// A lower bound: the bucket holds more than the team spends.
		b.rate, full = rate.Limit(math.Exp(b.integral)), b.integral
	}
	b.integral = min(max(b.integral, full+math.Log(minShare)), full)
	b.adapted = now
	x := b.integral
	if now.Before(b.errUntil) {
		x += gainP * b.err
	}
	// No attempt is woken: each asks for its turn again (reask).
	b.putShare(now, rate.Limit(math.Exp(x)))
}

// relax returns x after dt seconds of dx/dt = drive - pull*(x-full).
func relax(x, full, pull, drive, dt float64) float64 {
	eq := full + drive/pull
	return eq + (x-eq)*math.Exp(-pull*dt)
}

// sharing reports whether the model saw other clients spend the bucket
// within othersFor. b.mu is held.
func (b *paceBucket) sharing(now time.Time) bool {
	return !b.othersAt.IsZero() && now.Sub(b.othersAt) <= othersFor
}

// succeeded takes in a success of the attempt of t, whose answer said
// remaining: evidence of the rate. b.mu is held.
func (b *paceBucket) succeeded(now time.Time, t ticket, remaining int) {
	if remaining == 0 {
		b.evidence(now, t.at)
	}
}

// evidence takes in a success answered Remaining 0, of an attempt that
// went at sentAt. Each such success proves the server held a token: after
// the first the server counted of n of them, less than one was left, and
// the others took n-1 in the time between, at most from the earliest
// going of one to now. So the bucket refills faster than (n-2) over that
// time; a model that holds attempts while the server keeps answering
// them learns that its rate is too low. b.mu is held.
func (b *paceBucket) evidence(now, sentAt time.Time) {
	if b.runN == 0 || now.Sub(b.runFrom) > runWindow {
		b.runN, b.runFrom = 0, sentAt
	}
	b.runN++
	if sentAt.Before(b.runFrom) {
		b.runFrom = sentAt
	}
	if span := now.Sub(b.runFrom).Seconds(); b.runN > 2 && span > 0 {
		b.learnRate(now, rate.Limit(float64(b.runN-2)/span))
		b.drained, b.exact = true, true
	}
}

// throttle takes in a 429 with a usable Retry-After: the model holds no
// token, and a trusted one gives up one more, to the server: the 429 says
// the attempts reach it before its tokens are back, and one token's time
// more between them lets it get ahead of them again. Without a trusted
// rate the bucket is held for retryAfter. b.mu is held.
func (b *paceBucket) throttle(now time.Time, retryAfter time.Duration) {
	if b.lim != nil {
		if n := int(b.lim.TokensAt(now)); n > 0 {
			b.lim.AllowN(now, n)
		}
	}
	if b.trusted() {
		b.lim.ReserveN(now, 1) // never acted on: a turn left to the server
		b.wakeAll()
		return
	}
	if until := now.Add(retryAfter); until.After(b.holdUntil) {
		b.holdUntil = until
	}
}
