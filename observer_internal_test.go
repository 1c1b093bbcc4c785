package synthient

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
)

// TestNoObserverAllocatesNothing: without an observer, every step of the
// hook that a call runs (its start and end, a request's start and end, a
// hold, a storage request, the bytes of a download) allocates nothing.
func TestNoObserverAllocatesNothing(t *testing.T) { //nolint:paralleltest // AllocsPerRun counts the allocations of the whole process
	c, err := NewClient("key")
	require.NoError(t, err)
	defer c.Close()
	op := &operation{name: "LookupIP", method: http.MethodGet, route: "/lookup/ip/{ip}", class: retry.Billed, bucket: lookupBucket}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://api.test/api/v4/lookup/ip/1.2.3.4", nil)
	require.NoError(t, err)
	resp := &http.Response{StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1}
	cl := c.newCall(context.Background(), op)
	p := cl.policy.Policy
	allocs := testing.AllocsPerRun(1000, func() {
		ctx, call := c.startCall(context.Background(), "LookupIP", retry.Billed)
		cl.policy = retry.Call{Policy: p}
		cl.obs = c.observed(ctx)
		if cl.startRequest(req) != req {
			t.Fatal("startRequest changed the request")
		}
		cl.endRequest(retry.Decision{}, retry.Attempt{Status: 200}, resp, "id")
		cl.observeHold(0, "", false)
		oc := c.observed(ctx)
		r, _ := oc.startStorage(req, req.URL)
		oc.endStorage(ctx, 1, nil, retry.Failure{}, nil)
		oc.addBytes(int64(len(r.Method)))
		var err error
		call.end(&err)
	})
	assert.Zero(t, allocs, "allocations of the hook without an observer")
}

// TestProtocolVersion: RequestEnd.ProtocolVersion is the answer's HTTP
// version as network.protocol.version spells it.
func TestProtocolVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		major, minor int
		want         string
	}{
		{1, 1, "1.1"}, {1, 0, "1.0"}, {2, 0, "2"}, {3, 0, "3"}, {0, 0, ""}, {-1, 0, ""}, {1, 2, "1.2"},
	} {
		assert.Equal(t, tc.want, protocolVersion(&http.Response{ProtoMajor: tc.major, ProtoMinor: tc.minor}), "HTTP/%d.%d", tc.major, tc.minor)
	}
	assert.Empty(t, protocolVersion(nil), "no answer")
}
