package pace

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// state is what the model knows of a bucket's rate; the package comment
// has its transitions.
type state uint8

const (
	unknown state = iota // no answer stated the bucket yet
	unpaced              // the last answer stated none
	guessed              // a rate too low to give turns by: a lower bound
	suspect              // the first answer hints at other clients
	shared               // other clients seen: a lower bound that rises with the share
	exact                // a spent bucket, or successes, proved the rate
)

// paced reports whether the state gives turns by the rate.
func (s state) paced() bool { return s >= suspect }

// estimate is what the answers say of the server's bucket: its burst, its
// rate, and how far that rate is known (state). Only its methods write it.
type estimate struct {
	state state
	limit int        // the burst, RateLimit-Limit; 0 until an answer stated it
	rate  rate.Limit // the refill: the largest deficit per second seen, or what successes proved
	// firstDeficit and firstSent are the first deficit (Limit less
	// Remaining) an answer showed, and the attempts sent then (see sign);
	// firstSent is 0 until then.
	firstDeficit int
	firstSent    uint64
	// runN counts the successes answered Remaining 0 within runWindow of
	// runFrom, the earliest time one of them went (see evidence).
	runN    int
	runFrom time.Time
}

// restate takes in an answer that states the bucket with limit: the
// first such answer starts the estimate, and one with a new limit starts
// it afresh, as guessed; an unpaced estimate is guessed again. It reports
// whether the estimate started.
func (e *estimate) restate(limit int) bool {
	if limit == e.limit {
		if e.state == unpaced {
			e.state = guessed
		}
		return false
	}
	*e = estimate{limit: limit, state: guessed}
	return true
}

// observe takes in an answer's Remaining, of the limit, and its Reset:
// the rate rises to the deficit per second until full when that is more;
// before the rate gives turns, a deficit the client's own requests (sent
// so far) do not explain is a sign of other clients (see sign); Remaining
// 0 makes the rate exact. It returns this client's part of the deficit
// when the answer was a sign of others, else 0.
func (e *estimate) observe(remaining int, reset time.Duration, sent uint64) float64 {
	d := e.limit - remaining
	if d <= 0 || reset <= 0 {
		return 0
	}
	e.rate = max(e.rate, rate.Limit(float64(d)/reset.Seconds()))
	var part float64
	if !e.state.paced() {
		part = e.sign(d, remaining, sent)
	}
	if remaining == 0 {
		e.state = exact
	}
	return part
}

// sign looks for other clients in deficit d while the rate gives no
// turns: the first deficit beyond the attempts sent by excessSlack (two
// whole tokens), while tokens remain, hints at them (suspect); a deficit
// grown since by more than the attempts sent since shows them (shared).
// It returns this client's part of the deficit when either did, else 0.
func (e *estimate) sign(d, remaining int, sent uint64) float64 {
	first := e.firstSent == 0
	if first {
		e.firstDeficit, e.firstSent = d, sent
	}
	switch {
	case first && remaining > 0 && d >= int(sent)+int(math.Ceil(excessSlack)): //nolint:gosec // attempts sent: never past an int
		e.state = suspect
	case d-e.firstDeficit > int(sent-e.firstSent): //nolint:gosec // as above
		e.state = shared
	default:
		return 0
	}
	return float64(sent) / float64(d)
}

// settle ends a suspect estimate's doubt: to shared when others were
// seen, to guessed when not. Another state stays.
func (e *estimate) settle(others bool) {
	switch {
	case e.state != suspect:
	case others:
		e.state = shared
	default:
		e.state = guessed
	}
}

// alone takes in that no other client was seen for othersFor: a rate
// learnt from their spending (suspect, shared) gives no turns any more.
func (e *estimate) alone() {
	if e.lower() {
		e.state = guessed
	}
}

// lower reports whether the rate, learnt from other clients' spending,
// is a lower bound that gives turns (suspect, shared).
func (e *estimate) lower() bool {
	return e.state == suspect || e.state == shared
}

// raise multiplies the rate by f: the share controller found a bucket
// whose rate is a lower bound holding more than the team spends at it.
func (e *estimate) raise(f float64) {
	e.rate *= rate.Limit(f)
}

// unstated takes in an answer that stated no bucket: such a server is
// never slowed.
func (e *estimate) unstated() {
	e.state = unpaced
}

// evidence takes in a success answered Remaining 0, of an attempt that
// went at sentAt. Each such success proves the server held a token: after
// the first the server counted of n of them, less than one was left, and
// the others took n-1 in the time between, at most from the earliest
// going of one to now. So the bucket refills faster than (n-2) over that
// time: the rate rises to it, and is exact.
func (e *estimate) evidence(now, sentAt time.Time) {
	if e.runN == 0 || now.Sub(e.runFrom) > runWindow {
		e.runN, e.runFrom = 0, sentAt
	}
	e.runN++
	e.runFrom = minTime(e.runFrom, sentAt)
	span := now.Sub(e.runFrom).Seconds()
	if e.runN < 3 || span <= 0 {
		return
	}
	e.rate = max(e.rate, rate.Limit(float64(e.runN-2)/span))
	e.state = exact
}

// point is one answer's place in the measure of the team's spending:
// when the server counted its request (estimated), the tokens it said
// were left, and this client's counts of attempts and 429s then.
type point struct {
	at             time.Time
	remaining      int
	seq, throttled uint64
}

// verdict is what a window of answers says of other clients.
type verdict uint8

const (
	open   verdict = iota // no window ended
	others                // others spent the bucket
	none                  // nobody else spent it
	unsure                // a little more went than this client sent
)

// sight is the estimate of the others' spending: the windows over which
// it is measured, and what the last one showed. Only its methods write it.
type sight struct {
	ref point // where the current window began; seq 0: none yet
	// part is this client's part of what the team spent in the last
	// window (1 when it saw nobody else; 0 before any measure).
	part float64
	// othersAt is when other clients were last seen spending.
	othersAt time.Time
}

// saw takes in a sight of others at now, this client's part of their
// spending being part.
func (s *sight) saw(now time.Time, part float64) {
	s.othersAt, s.part = now, part
}

// taken takes in a 429 to an attempt sent on a token of the model's:
// another client took that token.
func (s *sight) taken(now time.Time) {
	s.othersAt = now
}

// forget drops the sight of others: it was wrong.
func (s *sight) forget() {
	s.othersAt, s.part = time.Time{}, 1
}

// sharing reports whether other clients were seen within othersFor.
func (s *sight) sharing(now time.Time) bool {
	return !s.othersAt.IsZero() && now.Sub(s.othersAt) <= othersFor
}

// measure ends a window at p when it is at least minSpan long, for a
// bucket of limit that refills at r: the tokens the bucket held at the
// window's start, plus its refill, less p.remaining, less the attempts
// this client sent in the window (not those answered 429), are the tokens
// other clients spent. A refill past the burst is lost: when this
// client's spending leaves room for the bucket to fill, the team spent
// at least the burst less p.remaining. The first point ends no window,
// nor does one whose own count is below 0: an answer to an attempt sent
// before the window's start.
func (s *sight) measure(now time.Time, p point, r rate.Limit, limit int, minSpan time.Duration) verdict {
	if s.ref.seq == 0 {
		s.ref = p
		return open
	}
	ref := s.ref
	own := float64(p.seq) - float64(ref.seq) - float64(p.throttled-ref.throttled)
	dt := p.at.Sub(ref.at)
	if own < 0 || dt < minSpan {
		return open
	}
	s.ref = p
	avail := float64(ref.remaining) + float64(r)*dt.Seconds()
	if avail-own > float64(limit) {
		avail = float64(limit)
	}
	used := avail - float64(p.remaining)
	switch excess := used - own; {
	case excess >= excessSlack:
		s.saw(now, min(max(own/used, 0), 1))
		return others
	case excess <= 0:
		s.forget()
		return none
	}
	s.part = 1
	return unsure
}

// window returns the least span the team's spending is measured over: the
// time a bucket of limit at r takes to refill half its burst, from a
// tenth of a second to one. A longer window would span a refill that may
// have filled the bucket, when the tokens it could not hold are not known.
func window(r rate.Limit, limit int) time.Duration {
	w := time.Duration(0.5 * float64(limit) / float64(r) * float64(time.Second))
	return min(max(w, 100*time.Millisecond), time.Second)
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
