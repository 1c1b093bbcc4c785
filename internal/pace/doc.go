// Package pace is the client's model of the API's rate limits: a Bucket
// for each token bucket of the server's, which holds an attempt while the
// model says the server has no token for it, rather than send it into a
// 429. It is the one description of the model; docs/retries.md says what
// a user sees of it.
//
// # What the server says
//
// The API counts a team's requests in token buckets (api-v4.md §5). Every
// key, process and host of a team draws on the same ones, and every answer
// says where its bucket stands: RateLimit-Limit is the burst,
// RateLimit-Remaining the whole tokens left, RateLimit-Reset the seconds
// until the bucket is full again. The clients of a team never talk to each
// other: each sees the others only in the tokens it did not spend, and
// they share a bucket by each following the rules below.
//
// # The parts of the model
//
// A Bucket has three parts, split by what writes each: the estimate of
// the server's bucket, the share controller, and the gate that holds
// attempts. Each is a type (the estimate two) that only its own methods
// write; Bucket's methods run them in turn under one lock (Answer: the
// estimate, the tokens, the sight of others, the share).
//
//   - The estimate of the limit and the rate (estimate): the bucket's burst
//     (limit), its refill (rate), and how far the rate is known (the states
//     below). The rate is the largest deficit per second until full,
//     (Limit - Remaining) / Reset, of the answers. From a partly spent
//     bucket that is too low: pacing by it would keep the bucket from ever
//     being spent, so it gives no turns. Once an answer said Remaining 0
//     the deficit is the whole burst, and the rate is exact up to Reset's
//     rounding to seconds. A success answered Remaining 0 proves a token
//     the headers did not show: n of them within a time t prove a refill
//     faster than (n-2)/t, and the rate rises to that (evidence): a server
//     that answers while its headers say it has no token fails no call on
//     the client's own hold.
//   - The estimate of the others' spending (sight): over a window of
//     answers at least as long as the bucket takes to refill half its
//     burst (0.1 s to 1 s), the tokens it held at the start, plus its
//     refill, less those it holds at the end, less this client's requests,
//     were spent by other clients (measure). excessSlack or more of them is
//     a sight of others, which lasts othersFor; a window with none ends it
//     at once. A 429 to an attempt sent on a token of a model that gives
//     turns is a sight of others too: another client took that token.
//   - The share controller (shareController), a proportional controller
//     toward a target level. While others are seen it steers the bucket
//     toward holding target of its burst, by this client's share of the
//     rate. Its output is the logarithm of the share's fraction of the
//     rate, so that all the team's shares scale alike whatever their
//     number: gainNow times the error (the level an answer said, less
//     target) at once, plus a lagged part that moves toward gainLag/leak
//     times the error with a time constant of 1/leak. The lag decays toward
//     the whole rate, which makes the shares converge on equal parts; as
//     the controller has no integral part, a team settles below the target,
//     the further the more clients it has. When the bucket is low, a client
//     with a larger part of the spending cuts faster (fairness). The share
//     moves with time, not only at answers (advance): a client whose small
//     share brings it few answers moves as fast as the others. Seeing
//     nobody, a client takes the whole rate.
//   - The gate (gate): this client's tokens, a rate.Limiter refilled at its
//     share and brought down to Remaining at each answer (fitTokens); the
//     queue of attempts waiting for a turn; the counts of attempts. A 429
//     empties the tokens; while the rate gives no turns, it holds the
//     bucket for its Retry-After.
//
// # States
//
// The estimate's state says what the gate does with an attempt:
//
//   - unknown: no answer stated the bucket yet. One attempt goes as a
//     probe, and the others wait for its answer; an attempt waits at most
//     probeWait for the next answer, then goes.
//   - unpaced: the last answer stated no bucket. Every attempt goes.
//   - guessed: the rate is a lower bound, too low to give turns by. An
//     attempt goes on a token while fewer than slow start's count are in
//     flight (one more for each success, as TCP's slow start), else as a
//     probe as in unknown; each answer raises the tokens to Remaining less
//     the attempts in flight, so that no attempt waits while the server
//     says it has tokens.
//   - suspect, shared, exact: the rate gives turns. An attempt goes at
//     once on a token when none waits before it; else it joins a queue,
//     first in, first out, and goes when the model holds a token for it
//     and a margin of half a token of the server's (a cushion for timer and
//     network jitter). A turn is a place in the queue: a change of share
//     moves every turn. A turn more than the caller's maxHold away, at the
//     whole rate, is not waited for. An attempt whose turn comes after its
//     deadline stops while a 429 of the last confirmFor confirms the model;
//     else one such attempt at a time goes as a probe. In suspect and shared
//     the rate, learnt from others' spending, is a lower bound, which rises
//     with the share while the bucket holds more than target.
//   - suspect: the first answer hints at other clients. A client that
//     starts on a bucket an earlier process left partly spent, and the
//     processes of a team that start together, see the same first answer:
//     a deficit their own requests do not explain. Both hold for their part
//     of the deficit, as a team must, but an attempt waits at most
//     probeWait: then it goes as a probe, and the next window of answers
//     shows whether others spend the bucket (shared) or it refills for this
//     client alone (guessed, at the whole rate).
//
// The transitions, and the function that makes each:
//
//	from               to       when                                              by
//	unknown, unpaced   guessed  an answer states the bucket                       estimate.restate
//	any stated         guessed  an answer states a new limit                      estimate.restate
//	any                unpaced  an answer states no bucket                        estimate.unstated
//	guessed            suspect  the first deficit is excessSlack (two whole       estimate.sign
//	                            tokens) or more beyond the attempts sent, with
//	                            tokens left
//	guessed            shared   the deficit grew by more than the attempts sent   estimate.sign
//	                            since the first
//	suspect            shared   the next window shows others                      estimate.settle
//	suspect            guessed  the next window shows nobody else                 estimate.settle
//	suspect, shared    guessed  nobody else seen for othersFor                    estimate.alone
//	guessed, suspect,  exact    Remaining 0                                       estimate.observe
//	shared
//	guessed, suspect,  exact    a third success answered Remaining 0 within       estimate.evidence
//	shared                      runWindow
//
// An answer runs restate before the others, so that the first answer of a
// bucket, unknown, may end suspect or exact.
package pace

import "time"

// Constants of the model.
const (
	// maxProbes is the most attempts in flight while nothing is known of
	// a bucket, or while its rate gives no turns and the model has no
	// token: one, so that the clients of a team that start together
	// learn of each other before they spend the bucket.
	maxProbes = 1
	// probeWait bounds how long an attempt waits for news of a bucket
	// whose state is not known yet (unknown, guessed, suspect): the answer
	// of an attempt in flight. After it the attempt goes anyway, as a
	// probe of its own.
	probeWait = time.Second
	// excessSlack is how many tokens the team may spend beyond this
	// client's without that being a sight of others: Remaining is rounded
	// down, and the window's ends are estimates.
	excessSlack = 1.5
	// minShare is the least fraction of the rate a share falls to.
	minShare = 1.0 / 256
	// target is the level of a shared bucket the controller steers
	// toward, as a fraction of its burst; gainNow the gain of the
	// immediate part of its output, gainLag (per second) and leak (per
	// second, while others are seen; 1 when not) those of the lagged
	// part; fairness how much faster a client that spends a larger part of
	// the bucket cuts its share.
	target   = 0.4
	gainNow  = 2.0
	gainLag  = 3.0
	leak     = 0.3
	fairness = 4
	// errFor is how long an answer's error drives the share at most.
	errFor = time.Second
	// othersFor is how long a sight of other clients lasts: after it,
	// with no new sight, the client takes the whole rate again.
	othersFor = 3 * time.Second
	// runWindow bounds the successes that evidence compares.
	runWindow = 5 * time.Second
	// reask is how often the first attempt in the queue asks for its turn
	// again, as the turn moves with the share, and a suspect model's
	// patience ends.
	reask = 100 * time.Millisecond
	// confirmFor is how long a 429 confirms the model's turns.
	confirmFor = 10 * time.Second
)
