package retry

import "sync/atomic"

// Default costs of a Quota, in the manner of aws-sdk-go-v2's standard
// retryer: a full quota allows 50 retries after 5xx answers or timeouts in
// a row before the client stops retrying. A retry after a 429 with a
// usable Retry-After is free: waiting out the server's wait is the server
// pacing the client, which multiplies nothing, and must not leave the
// client without retries for real failures.
const (
	DefaultQuotaCapacity = 500
	DefaultFailureCost   = 10 // a retry after a 5xx, a timeout or a network failure
	DefaultThrottleCost  = 0  // a retry after a 429 with Retry-After
	// SuccessCredit is what a call that succeeds at its first attempt gives
	// the quota, so that it refills once the outage is over.
	SuccessCredit = 1
)

// Quota is a client-wide retry token bucket. Every retry takes tokens
// (by default none after a rate limit); a call that
// succeeds after retrying gives back what its last retry took, and one that
// succeeds at once adds SuccessCredit. When the bucket is empty, calls stop
// retrying with QuotaExhausted until successes refill it, so an outage
// cannot multiply a client's traffic by its retry count: at most capacity /
// cost retries are sent while nothing succeeds.
//
// A Quota is safe for concurrent use; share one among the policies of a
// client.
type Quota struct {
	tokens       atomic.Int64
	capacity     int64
	failureCost  int64
	throttleCost int64
}

// NewQuota returns a full quota of capacity tokens, where a retry after a
// failure costs failureCost and one after a rate limit costs throttleCost.
// A throttleCost of 0 makes retries after a rate limit free; a negative
// one is read as 0. A capacity or failureCost below 1 is read as 1.
func NewQuota(capacity, failureCost, throttleCost int) *Quota {
	q := &Quota{
		capacity:     int64(max(capacity, 1)),
		failureCost:  int64(max(failureCost, 1)),
		throttleCost: int64(max(throttleCost, 0)),
	}
	q.tokens.Store(q.capacity)
	return q
}

// Available returns the tokens left.
func (q *Quota) Available() int { return int(q.tokens.Load()) }

// Capacity returns the size of the bucket.
func (q *Quota) Capacity() int { return int(q.capacity) }

// cost returns what a retry after a costs.
func (q *Quota) cost(a Attempt) int64 {
	if a.Err == nil && a.Status == 429 {
		return q.throttleCost
	}
	return q.failureCost
}

// take removes the cost of a retry after a, if the bucket holds it.
func (q *Quota) take(a Attempt) (int, bool) {
	n := q.cost(a)
	for {
		cur := q.tokens.Load()
		if cur < n {
			return 0, false
		}
		if q.tokens.CompareAndSwap(cur, cur-n) {
			return int(n), true
		}
	}
}

// refund gives n tokens back, never above the capacity.
func (q *Quota) refund(n int) {
	for {
		cur := q.tokens.Load()
		next := min(cur+int64(n), q.capacity)
		if q.tokens.CompareAndSwap(cur, next) {
			return
		}
	}
}
