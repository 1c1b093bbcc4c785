package synthient

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// CreditBudget is a store of credits that a Client's billed requests draw
// on: see WithCreditBudget. NewCreditBudget returns one that counts in
// memory; module github.com/synthient-go/synthient/redis has one that many
// processes and hosts share. Implement it for another store.
//
// Before the client sends a billed request it reserves the request's cost
// (Reserve); after the answer it gives back (Refund) what the API cannot
// have charged, and keeps the rest as spent. A reservation that is never
// refunded stays spent: a store needs no word that a request ended.
//
// The methods must be safe for concurrent use, and should return quickly:
// a request waits for Reserve before it is sent (a store over a network
// should bound each call with a short timeout of its own). ctx is the
// call's context: a store may read values from it (the synthient mcp
// command finds a session's budget there). Refund is given a context that
// is never cancelled, so that a call cut short still gives back what it
// did not spend.
type CreditBudget interface {
	// Reserve takes credits (more than 0) from the budget for one request
	// about to be sent. When they do not fit, it takes nothing and returns
	// an error matching ErrCreditBudget (errors.Is), and the request is
	// not sent. Any other error means the store failed: the request is not
	// sent either (a budget that cannot count spends nothing).
	Reserve(ctx context.Context, credits int64) (CreditReservation, error)
	// Refund gives back credits of r (0 < credits <= r.Credits) that the
	// API cannot have charged. A reservation is refunded at most once, into
	// the window it was taken from: a refund after that window ended, or a
	// second refund of r, changes nothing.
	Refund(ctx context.Context, r CreditReservation, credits int64) error
	// Balance returns the budget's state in its current window.
	Balance(ctx context.Context) (CreditBalance, error)
}

// CreditReservation is what CreditBudget.Reserve took.
type CreditReservation struct {
	// Credits is what was taken.
	Credits int64
	// Window is the start of the window the credits count in; zero for a
	// budget that never refills.
	Window time.Time
	// ID is the store's own reference to the reservation, opaque to the
	// client.
	ID string
}

// CreditBalance is a budget's state in one window.
type CreditBalance struct {
	// Credits is the budget of each window.
	Credits int64
	// Spent is what was reserved and not refunded in the current window.
	Spent int64
	// Left is Credits - Spent, never below 0.
	Left int64
	// Window is how long each window lasts; 0 for a budget that never
	// refills.
	Window time.Duration
	// Resets is when the current window ends; zero when Window is 0.
	Resets time.Time
}

// WithCreditBudget makes every billed request of the client draw on b:
// LookupIP and LookupDomain cost 1 credit, LookupIPs and each request of
// LookupIPsAll ceil(0.9 n) for its n distinct addresses, and Raw the cost
// of the lookup route it calls. Before such a request is sent its cost is
// reserved from b; a request whose cost does not fit is not sent, and its
// call returns a *ConnectionError with NotSent set whose error matches
// ErrCreditBudget, stop reason retry.CreditBudgetExhausted. A failure of
// b itself does not send the request either: the call's error, a
// *ConnectionError with NotSent set, says the budget failed and wraps b's
// error, stop reason retry.CreditBudgetFailed. LookupIPsAll stops at the
// first request refused: every address not sent yet is NotSent with that
// error.
//
// What the cache answers (WithCache), and a call that shares the request
// of an identical call in flight, costs nothing and reserves nothing: only
// a request actually sent reserves, once. A reservation is given back when
// the API cannot have charged the request: it was not sent after all (the
// context ended, pacing held it), or the API refused it with a 4xx, such
// as 402, 422 or 429. It is kept when the request may have been processed
// (a 5xx, a connection lost after the request was written) or succeeded.
// A request sent again after a refunded attempt (a 429 waited out)
// reserves again. So the credits the API charges the client never exceed
// what b counts as spent. The observer's CallEnd counts the credits each
// call reserved, refunded and was refused.
//
// One budget may be shared by many clients. nil, or a budget from
// NewCreditBudget with a negative argument, is an error.
func WithCreditBudget(b CreditBudget) Option {
	return func(s *settings) error {
		if b == nil {
			return invalid("credit budget is nil")
		}
		if mb, ok := b.(*memoryBudget); ok && mb.err != nil {
			return mb.err
		}
		s.budget = b
		return nil
	}
}

// NewCreditBudget returns a CreditBudget of credits per window, counted in
// memory. A window of 0 never refills: credits is all the budget ever
// has. Otherwise the budget refills at the start of each window, the
// windows being aligned to the Unix epoch in UTC, as the shared budget of
// module redis aligns them: a window of 24 hours starts at 00:00 UTC, one
// of an hour on the hour. A reservation counts in the window it was taken
// in; its refund after that window ended gives nothing back.
//
// A budget of 0 credits refuses every billed request. A negative credits
// or window makes a budget that WithCreditBudget refuses, whose methods
// return an error matching ErrInvalidArgument.
//
// The budget is safe for concurrent use, starts no goroutine and needs no
// closing. It remembers each refund of the current window (a few dozen
// bytes each) to refuse a second one. Many clients may share it; the
// processes of a fleet need the shared budget of module redis.
func NewCreditBudget(credits int64, window time.Duration) CreditBudget {
	b := &memoryBudget{credits: credits, window: window, now: time.Now}
	switch {
	case credits < 0:
		b.err = invalid("credit budget of %d credits, less than 0", credits)
	case window < 0:
		b.err = invalid("credit budget window of %v, less than 0", window)
	}
	return b
}

// memoryBudget is the CreditBudget of NewCreditBudget.
type memoryBudget struct {
	credits int64
	window  time.Duration
	err     error            // set for an invalid budget
	now     func() time.Time // the clock

	mu       sync.Mutex
	start    time.Time // the current window's start; zero for a window of 0
	spent    int64
	next     uint64              // the last reservation's number
	refunded map[uint64]struct{} // the reservations of the window refunded
}

// roll moves the budget into the window of now, which refills it. The
// caller holds b.mu.
func (b *memoryBudget) roll() {
	if b.window == 0 {
		return
	}
	now := b.now().UnixNano()
	start := time.Unix(0, now-now%int64(b.window)).UTC()
	if start.Equal(b.start) {
		return
	}
	b.start, b.spent = start, 0
	clear(b.refunded)
}

// Reserve takes credits, or refuses with an error matching
// ErrCreditBudget.
func (b *memoryBudget) Reserve(_ context.Context, credits int64) (CreditReservation, error) {
	switch {
	case b.err != nil:
		return CreditReservation{}, b.err
	case credits <= 0:
		return CreditReservation{}, invalid("reserving %d credits, not more than 0", credits)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll()
	if left := b.credits - b.spent; credits > left {
		return CreditReservation{}, budgetRefusal(credits, left, b.credits, b.resets())
	}
	b.spent += credits
	b.next++
	return CreditReservation{Credits: credits, Window: b.start, ID: strconv.FormatUint(b.next, 10)}, nil
}

// Refund gives back credits of r, once, if r was taken in the current
// window.
func (b *memoryBudget) Refund(_ context.Context, r CreditReservation, credits int64) error {
	if b.err != nil {
		return b.err
	}
	id, err := strconv.ParseUint(r.ID, 10, 64)
	switch {
	case credits <= 0 || credits > r.Credits:
		return invalid("refunding %d credits of a reservation of %d", credits, r.Credits)
	case err != nil || id == 0:
		return invalid("refunding a reservation this budget did not make (ID %q)", r.ID)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if id > b.next {
		return invalid("refunding a reservation this budget did not make (ID %q)", r.ID)
	}
	b.roll()
	if _, done := b.refunded[id]; done || !r.Window.Equal(b.start) {
		return nil
	}
	if b.refunded == nil {
		b.refunded = map[uint64]struct{}{}
	}
	b.refunded[id] = struct{}{}
	b.spent = max(b.spent-credits, 0)
	return nil
}

// Balance returns the state of the current window.
func (b *memoryBudget) Balance(context.Context) (CreditBalance, error) {
	if b.err != nil {
		return CreditBalance{}, b.err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll()
	return CreditBalance{
		Credits: b.credits,
		Spent:   b.spent,
		Left:    max(b.credits-b.spent, 0),
		Window:  b.window,
		Resets:  b.resets(),
	}, nil
}

// resets returns the end of the current window; zero for a window of 0.
// The caller holds b.mu.
func (b *memoryBudget) resets() time.Time {
	if b.window == 0 {
		return time.Time{}
	}
	return b.start.Add(b.window)
}
