package synthient

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRefusedBatchIsNotSent: a refusal is recorded by the goroutine of the
// request that got it (the first one, and only one that every later
// request would get too), and a batch whose goroutine finds one recorded
// is settled as not sent, with that error, and sends nothing. This is the
// check that holds between a refusal's answer and the run taking the
// refused batch in, which no black-box test can time.
func TestRefusedBatchIsNotSent(t *testing.T) {
	t.Parallel()
	var sent atomic.Int32
	c, err := NewClient("key", WithBaseURL("https://api.test/api/v4"), WithTransport(roundTripFunc(
		func(*http.Request) (*http.Response, error) {
			sent.Add(1)
			return nil, errors.New("sent")
		})))
	require.NoError(t, err)
	defer c.Close()

	var f refusal
	f.record(nil)
	f.record(&APIError{Status: http.StatusServiceUnavailable})
	require.NoError(t, f.err(), "a refusal kept for an error that does not stop the run")
	paymentRequired := &APIError{Status: http.StatusPaymentRequired}
	f.record(paymentRequired)
	f.record(&APIError{Status: http.StatusUnauthorized})
	require.Same(t, paymentRequired, f.err(), "the first refusal is kept")

	b := &bulkBatch{addrs: []netip.Addr{netip.MustParseAddr("192.0.2.7")}}
	b.lookUp(context.Background(), c, &f)
	assert.Equal(t, NotSent, b.outcome)
	assert.Same(t, paymentRequired, b.err)
	assert.Zero(t, sent.Load(), "requests sent")
	assert.Zero(t, b.charged(), "credits of a batch not sent")
}
