package mcp_test

import (
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of toolerror.go: the API's failures, injected in the fake,
// arrive as error results an agent can act on.

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, route string
		fault       synthienttest.Fault
		tool        string
		args        any
		want        toolError
		outcome     string // of each address, for lookup_ip
		maySpent    int64
	}{
		{"503 on a lookup", synthienttest.RouteLookupIP, synthienttest.Fault{Status: 503}, "lookup_ip", ips("198.51.100.1"),
			toolError{Status: 503, StopReason: "may_have_been_processed", MayHaveBeenCharged: true}, "may_have_been_charged", 1},
		{"429 with Retry-After", synthienttest.RouteLookupIP, synthienttest.Fault{Status: 429, RetryAfter: "120"}, "lookup_ip", ips("198.51.100.2"),
			toolError{Status: 429, StopReason: "retry_after_exceeds_max", RetryAfterSeconds: ptr(120.0)}, "rejected", 0},
		{"429 without Retry-After", synthienttest.RouteLookupIP, synthienttest.Fault{Status: 429}, "lookup_ip", ips("198.51.100.3"),
			toolError{Status: 429, StopReason: "rate_limited_without_retry_after"}, "rejected", 0},
		{"connection cut after the request", synthienttest.RouteLookupIP, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest}, "lookup_ip", ips("198.51.100.4"),
			toolError{StopReason: "may_have_been_processed", MayHaveBeenCharged: true}, "may_have_been_charged", 1},
		{"503 on a bulk lookup", synthienttest.RouteLookupIPs, synthienttest.Fault{Status: 503}, "lookup_ip", ips("198.51.100.5", "198.51.100.6"),
			toolError{Status: 503, StopReason: "may_have_been_processed", MayHaveBeenCharged: true}, "may_have_been_charged", 2},
		{"503 on a domain", synthienttest.RouteLookupDomain, synthienttest.Fault{Status: 503}, "lookup_domain", map[string]any{"domain": "example.net"},
			toolError{Status: 503, StopReason: "may_have_been_processed", MayHaveBeenCharged: true}, "", 1},
		{"503 on the account", synthienttest.RouteAccount, synthienttest.Fault{Status: 503}, "get_account", nil,
			toolError{Status: 503, StopReason: "attempts_exhausted"}, "", 0},
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t)
			var cs *gomcp.ClientSession
			if transport == "stdio" {
				cs, _ = startStdio(t, srv, "--max-retries", "0") // the account's 503 is not waited out
			} else {
				cs = startHTTP(t, srv, "--max-retries", "0").connect(t, nil)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					srv.Inject(tt.route, 1, tt.fault)
					res := call(t, cs, tt.tool, tt.args)
					require.True(t, res.IsError, "%s", text(res))
					out := output[lookupIPOut](t, res)
					e := out.Error
					require.NotNil(t, e, "%s", text(res))
					assert.Equal(t, tt.want.Status, e.Status, "status")
					assert.Equal(t, tt.want.StopReason, e.StopReason, "stop reason")
					assert.Equal(t, tt.want.RetryAfterSeconds, e.RetryAfterSeconds, "retry_after_seconds")
					assert.Equal(t, tt.want.MayHaveBeenCharged, e.MayHaveBeenCharged, "may_have_been_charged")
					assert.Equal(t, tt.maySpent, out.CreditsMayHaveSpent, "credits_may_have_spent")
					assert.Zero(t, out.CreditsSpent, "credits_spent")
					assert.NotEmpty(t, e.Hint, "hint")
					assert.NotContains(t, jsonOf(t, res), srv.APIKey, "the result shows the key")
					if tt.want.Status != 0 {
						assert.NotEmpty(t, e.RequestID, "request id")
						assert.NotEmpty(t, e.Title+e.Detail, "the problem's title and detail")
						assert.Contains(t, text(res), "request id "+e.RequestID)
					}
					for i, r := range out.Results {
						assert.Equal(t, tt.outcome, r.Outcome, "ips[%d]", i)
					}
				})
			}
			assert.Zero(t, spent(srv), "the fake charged a fault")
		})
	}
}

func ptr[T any](v T) *T { return &v }
