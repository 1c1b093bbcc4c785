package mcp_test

import (
	"context"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of tool.go: what every call gets.

// A call the client cancels stops at once, though the API has not
// answered: the server says on stderr that what it sent may have been
// charged, and serves the session's next call.
func TestCancelledCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, route string
		args        any
		want        string
	}{
		{"one address", synthienttest.RouteLookupIP, ips("192.0.2.10"), "lookup_ip cancelled by the client: what was already sent may have been charged (1 credit)"},
		{"three addresses", synthienttest.RouteLookupIPs, ips("192.0.2.11", "192.0.2.12", "192.0.2.13"),
			"lookup_ip cancelled by the client: what was already sent may have been charged (3 credits)"},
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, tt := range tests {
			t.Run(transport+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t)
				cs, stderr := start(t, transport, srv)
				// The API holds its answer for 10 minutes: only a call that
				// stops when cancelled logs within the wait below.
				srv.Inject(tt.route, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 10 * time.Minute})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "lookup_ip", Arguments: tt.args})
					done <- err
				}()
				require.Eventually(t, func() bool { return srv.Arrivals(tt.route) == 1 }, time.Minute, 5*time.Millisecond, "the request reached the fake")
				cancel()
				require.ErrorIs(t, <-done, context.Canceled)
				require.Eventually(t, func() bool { return assert.ObjectsAreEqual(true, containsLine(stderr.String(), tt.want)) },
					time.Minute, 10*time.Millisecond, "stderr:\n%s", stderr)

				res := call(t, cs, "lookup_ip", ips("192.0.2.20"))
				assert.False(t, res.IsError, "the next call: %s", text(res))
			})
		}
	}
}

// containsLine reports whether s has a line that is "synthient mcp: "
// and line.
func containsLine(s, line string) bool {
	for _, l := range clitest.Lines(s) {
		if l == "synthient mcp: "+line {
			return true
		}
	}
	return false
}
