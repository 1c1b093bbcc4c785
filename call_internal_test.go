package synthient

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
)

// TestCheckRetrySuccessAllocatesNothing: the client's decision on a first
// attempt that succeeded (its CheckRetry on go-retryablehttp, with the
// policy, the quota and the logging check) allocates nothing.
func TestCheckRetrySuccessAllocatesNothing(t *testing.T) {
	c, err := NewClient("key")
	require.NoError(t, err)
	defer c.Close()
	op := &operation{name: "LookupIP", method: http.MethodGet, route: "/lookup/ip/{ip}", class: retry.Billed}
	resp := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}, "Date": {"Mon, 30 Nov 2026 18:00:00 GMT"}},
		Body:       io.NopCloser(strings.NewReader("{}")),
	}
	l := c.loops.Get().(*attemptLoop)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		l.start(op, c.policy)
		// A plain check: the measured function must not allocate for the
		// assertion itself.
		if retry, err := l.checkRetry(ctx, resp, nil); retry || err != nil || l.last != nil {
			t.Fatalf("checkRetry = %v, %v (last %v), want success", retry, err, l.last)
		}
		l.reset()
	})
	assert.Zero(t, allocs, "allocations of checkRetry on a success")
}
