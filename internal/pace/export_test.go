package pace

// What the tests of package pace_test see of the model beyond its API.

import "time"

// stateNames names the states, for the tests.
var stateNames = [...]string{"unknown", "unpaced", "guessed", "suspect", "shared", "exact"}

// Snapshot is the model of a Bucket at one time.
type Snapshot struct {
	State               string
	Limit               int
	Rate, Share, Tokens float64
	Sharing             bool // other clients seen
	InFlight, Queued    int
}

// Snapshot returns the model now.
func (b *Bucket) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	s := Snapshot{
		State: stateNames[b.est.state], Limit: b.est.limit,
		Rate: float64(b.est.rate), Share: float64(b.share()),
		Sharing: b.team.sharing(now), InFlight: b.gate.inflight, Queued: len(b.gate.queue),
	}
	if b.gate.lim != nil {
		s.Tokens = b.gate.lim.TokensAt(now)
	}
	return s
}

// Go lets an attempt go now, whatever the model says (as one past its
// deadline, or a probe past its patience, may), and returns its ticket.
func (b *Bucket) Go() Ticket {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gate.send(time.Now(), Ticket{}).ticket
}

// Advance moves the share with time to now, as an attempt that asks for
// its turn does.
func (b *Bucket) Advance() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(time.Now())
}
