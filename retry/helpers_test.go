package retry_test

// The package's test helpers: deadlines on the fixed clock, and the
// attempts a decision is given. What the tests of retry/retryhttp share
// with these is in package retry/internal/retrytest (the fixed policies
// and the expected outcomes) and internal/nettest (the loopback servers
// and clients). A helper used by one test file stays in that file; what
// two files need lives here. TestMain (goleak) is in main_test.go.

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/synthient-go/synthient/retry"
)

// maxDuration is the largest Duration, where waits and Retry-After values
// saturate.
const maxDuration = time.Duration(math.MaxInt64)

// deadlineCtx returns a context whose deadline lies d after the fixed
// clock's now.
func deadlineCtx(t testing.TB, now time.Time, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(d))
	t.Cleanup(cancel)
	return ctx
}

// status is an attempt that got a response with code and these
// Retry-After field values.
func status(code int, retryAfter ...string) retry.Attempt {
	return retry.Attempt{Status: code, RetryAfter: retryAfter}
}

// netFailure is an attempt that got no response, classified as f.
func netFailure(f retry.Failure) retry.Attempt {
	return retry.Attempt{Err: errors.New("connection failed"), Failure: f}
}
