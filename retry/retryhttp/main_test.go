package retryhttp_test

// The tests' helpers are those the tests of package retry use too:
// retry/internal/retrytest (fixed policies, expected outcomes) and
// internal/nettest (loopback servers and clients).

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
