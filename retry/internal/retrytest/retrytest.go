// Package retrytest holds what the tests of package retry and of
// retry/retryhttp share, so that neither keeps a copy: a policy whose
// clock and jitter are fixed, and the outcome a decision must have. It is
// for tests only.
package retrytest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
)

// Now returns the reference instant of the fixed clocks. It lies a day
// ahead of the real clock so that a context deadline built from it never
// expires (in real time) while a test runs: deadline checks then depend on
// the fixed clock only.
func Now() time.Time { return time.Now().Add(24 * time.Hour).Round(0) }

// DetPolicy returns retry.New(c) with a fixed clock, at the instant it
// returns, and a jitter source that always draws u, so that every wait is
// known in advance.
func DetPolicy(c retry.Class, u float64) (retry.Policy, time.Time) {
	now := Now()
	p := retry.New(c)
	p.Rand = func() float64 { return u }
	p.Now = func() time.Time { return now }
	return p, now
}

// Outcome is what a decision must say: retry or not, and why it stops.
type Outcome struct {
	Retry  bool
	Reason retry.StopReason
}

var (
	// RetryIt is a retry.
	RetryIt = Outcome{Retry: true}
	// Success is neither a retry nor a stop: the call's result.
	Success = Outcome{}
)

// StopWith is a stop for r.
func StopWith(r retry.StopReason) Outcome { return Outcome{Reason: r} }

// RequireOutcome checks that d retries, succeeds or stops as want says (a
// retry or a success carries no stop reason).
func RequireOutcome(t testing.TB, d retry.Decision, want Outcome) {
	t.Helper()
	require.Equal(t, want, Outcome{d.Retry, d.Reason}, "decision %+v", d)
}
