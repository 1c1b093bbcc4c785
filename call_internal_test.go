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
func TestCheckRetrySuccessAllocatesNothing(t *testing.T) { //nolint:paralleltest // AllocsPerRun counts the allocations of the whole process
	c, err := NewClient("key")
	require.NoError(t, err)
	defer c.Close()
	op := &operation{name: "LookupIP", method: http.MethodGet, route: "/lookup/ip/{ip}", class: retry.Billed}
	resp := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}, "Date": {"Mon, 30 Nov 2026 18:00:00 GMT"}},
		Body:       io.NopCloser(strings.NewReader("{}")),
	}
	cl := c.newCall(context.Background(), op)
	p := cl.policy.Policy
	allocs := testing.AllocsPerRun(1000, func() {
		cl.policy, cl.attempts = retry.Call{Policy: p}, 0
		// A plain check: the measured function must not allocate for the
		// assertion itself.
		if retry, err := checkRetry(cl, resp, nil); retry || err != nil || cl.last.set() {
			t.Fatalf("checkRetry = %v, %v (last %+v), want success", retry, err, cl.last)
		}
	})
	assert.Zero(t, allocs, "allocations of checkRetry on a success")
}
