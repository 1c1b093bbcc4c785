package pace

import (
	"math"
	"time"
)

// shareController is a proportional controller toward a target level: it
// steers the level of a bucket other clients spend too toward target of
// its burst, by this client's share of the rate. Its output is the
// logarithm of the share's fraction of the rate, out, so that every
// client of a team scales its share alike whatever their number: out is
// gainNow times the error (the level less target, from the last answer)
// at once, plus lag, which moves toward gainLag/leak times the error with
// a time constant of 1/leak. Only its methods write it; the zero value
// takes the whole rate.
type shareController struct {
	// lag is the lagged part of out; it decays toward 0 (the whole rate)
	// at leak per second while others are seen, at 1 per second when not.
	lag float64
	// err is the last answer's error, which drives lag, and adds to out,
	// until errUntil.
	err      float64
	errUntil time.Time
	// at is when lag last moved; zero before the first move.
	at time.Time
	// out is the output: log(share / rate), from log(minShare) to 0.
	out float64
}

// fraction returns the share's fraction of the rate.
func (c *shareController) fraction() float64 { return math.Exp(c.out) }

// start sets the share to part of the rate, at once and lagged, with no
// error: a client that sees others from its first answer takes its part
// of the deficit.
func (c *shareController) start(part float64) {
	c.lag = clampLog(math.Log(part))
	c.out, c.err, c.errUntil = c.lag, 0, time.Time{}
}

// steer takes in an answer at now that found the bucket at level (the
// tokens left over the burst): the error, level less target, drives the
// share until the next answer, for at most errFor. When the team spends
// too much, a client with a larger part of the spending cuts faster (by
// fairness times its part), so that the shares converge.
func (c *shareController) steer(now time.Time, level, part float64) {
	e := level - target
	e += fairness * part * min(e, 0)
	c.err, c.errUntil = e, now.Add(errFor)
	c.out = clampLog(c.lag + gainNow*e)
}

// rest drops the error: no other client is seen.
func (c *shareController) rest() {
	c.err, c.errUntil = 0, time.Time{}
}

// advance moves lag from when it last moved to now, sharing telling
// whether others are seen: driven by the error until errUntil, and
// decaying toward the whole rate all the while, so that the share moves
// with time, not only at answers (a client whose small share brings it
// few answers moves as fast as one that gets many), and the shares
// converge on equal parts. When lower is set, the rate is a lower bound,
// and a lag above 0 says the bucket holds more than the team spends: lag
// is then put back to 0, and advance returns the factor by which the
// rate rises (1 when it does not).
func (c *shareController) advance(now time.Time, sharing, lower bool) float64 {
	if c.at.IsZero() {
		c.at = now
		return 1
	}
	if !now.After(c.at) {
		return 1
	}
	decay := 1.0
	if sharing {
		decay = leak
	}
	from := c.at
	if c.errUntil.After(from) {
		to := minTime(c.errUntil, now)
		c.lag = relax(c.lag, decay, gainLag*c.err, to.Sub(from).Seconds())
		from = to
	}
	c.lag = relax(c.lag, decay, 0, now.Sub(from).Seconds())
	rise := 1.0
	if lower {
		rise, c.lag = math.Exp(max(c.lag, 0)), min(c.lag, 0)
	}
	c.lag, c.at = clampLog(c.lag), now
	c.out = c.lag
	if now.Before(c.errUntil) {
		c.out = clampLog(c.lag + gainNow*c.err)
	}
	return rise
}

// relax returns x after dt seconds of dx/dt = drive - decay*x.
func relax(x, decay, drive, dt float64) float64 {
	eq := drive / decay
	return eq + (x-eq)*math.Exp(-decay*dt)
}

// clampLog returns x kept between log(minShare) and 0.
func clampLog(x float64) float64 {
	return min(max(x, math.Log(minShare)), 0)
}
