package pace

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Bucket is the model of one rate-limit bucket of the server's. Its
// methods are safe for concurrent use; the zero value knows nothing yet.
type Bucket struct {
	mu   sync.Mutex
	est  estimate        // the limit, the rate, and how far it is known
	team sight           // the others' spending
	ctl  shareController // this client's share of the rate
	gate gate            // the tokens, the queue and the counts of attempts
}

// Ticket is what the model notes of an attempt it let go, for its end
// (Answer or Release). The zero value is no attempt's.
type Ticket struct {
	// seq numbers the attempt among those the bucket let go; ended is
	// the bucket's count of ended attempts when it went.
	seq, ended uint64
	// at is when it went.
	at time.Time
	// probe reports that it went as a probe of the model's turns.
	probe bool
	// token reports that it went on a token of the model's: a 429 to it
	// is one the model did not expect.
	token bool
}

// Answer is what the server answered an attempt, as the model reads it.
type Answer struct {
	// Status is the HTTP status.
	Status int
	// Limit, Remaining and Reset are the RateLimit headers: the burst,
	// the whole tokens left (0 or more) and the time until the bucket is
	// full. A Limit of 0 says that the answer stated no bucket: a header
	// was missing or unusable.
	Limit, Remaining int
	Reset            time.Duration
	// Throttled reports a 429 whose Retry-After the call waits out,
	// RetryAfter.
	Throttled  bool
	RetryAfter time.Duration
}

// tooMany is the status of a throttled attempt.
const tooMany = http.StatusTooManyRequests

// Answer takes in the answer a to the attempt of t.
func (b *Bucket) Answer(t Ticket, a Answer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.gate.land(t)
	b.gate.heard(now, a.Status)
	stated := a.Limit > 0
	if stated {
		b.learn(now, t, a)
	}
	b.gate.ended++
	if a.Throttled {
		b.gate.drain(now, a.RetryAfter, b.est.state.paced())
	}
	if !stated {
		b.est.unstated()
	}
	b.gate.notify()
}

// Release takes in that the attempt of t ended without an answer: the
// next attempt may probe.
func (b *Bucket) Release(t Ticket) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate.land(t)
	b.gate.ended++
	b.gate.notify()
}

// learn takes in the answer a, which states the bucket, to the attempt of
// t, at now: the estimate first, then the tokens, the sight of others and
// the share. b.mu is held.
func (b *Bucket) learn(now time.Time, t Ticket, a Answer) {
	remaining := min(a.Remaining, a.Limit)
	// Answers can come in another order than the server counted the
	// requests: the attempts that ended meanwhile (stale) may have taken
	// tokens after this one, which remaining does not show.
	stale := int(min(b.gate.ended-t.ended, uint64(a.Limit))) //nolint:gosec // a.Limit is > 0, so the min fits an int
	first := b.gate.lim == nil
	b.restate(now, a.Limit)
	was := b.est.state
	part := b.est.observe(remaining, a.Reset, b.gate.sent)
	if part > 0 {
		b.team.saw(now, part)
		b.ctl.start(part)
	}
	if was == suspect {
		b.decide(now, t, remaining)
	}
	b.fitTokens(now, remaining, stale, first, part, was)
	if b.est.state.paced() {
		if was != suspect {
			b.measure(now, t, remaining)
		}
		if a.Status == tooMany && t.token {
			b.team.taken(now)
		}
		b.adapt(now, remaining)
	}
	if a.Status/100 == 2 && remaining == 0 {
		b.est.evidence(now, t.at)
	}
	b.gate.lim.SetLimitAt(now, b.share())
}

// restate starts the model at the first answer that states the bucket,
// with limit, and afresh at a new limit: what was learnt of the old one
// no longer holds. b.mu is held.
func (b *Bucket) restate(now time.Time, limit int) {
	if !b.est.restate(limit) {
		return
	}
	b.team.ref, b.ctl = point{}, shareController{}
	if b.gate.lim == nil {
		b.gate.lim = rate.NewLimiter(0, limit)
		return
	}
	b.gate.lim.SetBurstAt(now, limit)
	b.gate.wakeAll()
}

// decide ends a suspect model's doubt at the answer, of the attempt of t,
// that closes a window from the answer that made it suspect: when other
// clients spent the bucket in it, it is shared; else the client is alone,
// and takes the whole rate again. A shorter window may have ended before
// the others spent anything; the probe that goes once an attempt waited
// probeWait closes a full one, as no window is longer. b.mu is held.
func (b *Bucket) decide(now time.Time, t Ticket, remaining int) {
	v := b.measure(now, t, remaining)
	if v == open {
		return
	}
	b.est.settle(v == others)
	if v != others {
		b.team.forget()
		b.ctl = shareController{}
	}
}

// measure takes the answer at now, which said remaining, of the attempt
// of t, into the measure of the team's spending (see sight.measure), as
// counted halfway through its flight, as far as the client can tell.
// b.mu is held.
func (b *Bucket) measure(now time.Time, t Ticket, remaining int) verdict {
	p := point{at: t.at.Add(now.Sub(t.at) / 2), remaining: remaining, seq: t.seq, throttled: b.gate.throttled}
	return b.team.measure(now, p, b.est.rate, b.est.limit, window(b.est.rate, b.est.limit))
}

// fitTokens brings the model's tokens to what an answer at now says:
// down to remaining (less the attempts in flight, for the first answer;
// this client's part of it, when the answer showed others); and, while
// the model gives no turns, up to remaining less the attempts in flight
// and those that may have been counted after it (stale). Of a bucket
// others spend, the tokens are cut again to the share's fraction of the
// rate. When the rate starts giving turns at this answer (was is the
// state before it), the part of a token beyond the whole ones goes too.
// b.mu is held.
func (b *Bucket) fitTokens(now time.Time, remaining, stale int, first bool, part float64, was state) {
	target := remaining
	if first {
		// The other probes in flight took no token of the model's, but
		// will take the server's.
		target = max(remaining-b.gate.inflight, 0)
	}
	if part > 0 {
		// The clients answered after this one are not in the deficit:
		// its part of the tokens, and below of that part again.
		target = int(float64(remaining) * part)
	}
	if b.team.sharing(now) {
		target = int(float64(target) * b.ctl.fraction())
	}
	b.gate.fit(now, target, remaining-b.gate.inflight-stale, !b.est.state.paced(), b.est.state.paced() && !was.paced())
}

// adapt moves the share for an answer at now that said remaining: while
// other clients are seen, the controller steers the bucket toward target
// of its burst; when they are not, the error is dropped, and a rate
// learnt from them gives no turns any more. b.mu is held.
func (b *Bucket) adapt(now time.Time, remaining int) {
	b.advance(now)
	if !b.team.sharing(now) {
		b.ctl.rest()
		b.est.alone()
		return
	}
	// No attempt is woken: a cut share moves no turn past a deadline (a
	// turn for the team is late only at the whole rate), and the first in
	// the queue asks again (reask).
	b.ctl.steer(now, float64(remaining)/float64(b.est.limit), b.team.part)
}

// advance moves the share with time to now, and the rate with it when the
// rate is a lower bound. No attempt is woken: each in the queue asks for
// its turn again (reask). b.mu is held.
func (b *Bucket) advance(now time.Time) {
	b.est.raise(b.ctl.advance(now, b.team.sharing(now), b.est.lower()))
	b.gate.lim.SetLimitAt(now, b.share())
}

// share returns this client's part of the rate. b.mu is held.
func (b *Bucket) share() rate.Limit {
	return b.est.rate * rate.Limit(b.ctl.fraction())
}
