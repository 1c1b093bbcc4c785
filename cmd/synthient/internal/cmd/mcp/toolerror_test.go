package mcp_test

import (
	"testing"

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
			cs, _ := start(t, transport, srv, "--max-retries", "0") // the account's 503 is not waited out
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

// A bad argument is an error that names it; nothing is sent.
func TestBadArguments(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv)
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent") }) // after the subtests
	tests := []struct {
		tool, argument string
		args           any
	}{
		{"lookup_ip", "ips[0]", ips("999.1.1.1")},
		{"lookup_ip", "ips[0]", ips("fe80::1%eth0")},
		{"lookup_ip", "ips[0]", ips("bad", "worse")},
		{"lookup_ip", "ips", ips()},
		{"lookup_ip", "ips", map[string]any{"ips": []string{}}},
		{"lookup_ip", "ips", map[string]any{"ips": "8.8.8.8"}},
		{"lookup_domain", "domain", map[string]any{"domain": "a/b"}},
		{"lookup_domain", "limit", map[string]any{"domain": "example.com", "limit": 1001}},
		{"list_feed_snapshots", "stream", map[string]any{"stream": "proxys"}},
		{"list_feed_snapshots", "limit", map[string]any{"stream": "proxies", "limit": 501}},
		{"list_feed_snapshots", "limit", map[string]any{"stream": "proxies", "limit": 0}},
		{"list_feed_snapshots", "stream", map[string]any{"limit": 5}},
		{"feed_snapshot_meta", "date", map[string]any{"stream": "proxies", "date": "yesterday"}},
		{"feed_snapshot_meta", "date", map[string]any{"stream": "proxies", "date": "2026-06-10/24"}},
		{"feed_snapshot_meta", "stream", map[string]any{"stream": "", "date": "latest"}},
		{"sample_stream", "count", map[string]any{"stream": "proxies", "count": 501}},
		{"sample_stream", "timeout_seconds", map[string]any{"stream": "proxies", "timeout_seconds": 121}},
		{"sample_stream", "stream", map[string]any{"stream": "grpc"}},
		{"get_account", "verbose", map[string]any{"verbose": true}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+jsonOf(t, tt.args), func(t *testing.T) {
			t.Parallel()
			res := call(t, cs, tt.tool, tt.args)
			require.True(t, res.IsError, "%s", text(res))
			out := output[credits](t, res)
			require.NotNil(t, out.Error)
			assert.Equal(t, tt.argument, out.Error.Argument, "%s", text(res))
			assert.Contains(t, out.Error.Hint, "nothing was sent")
			assert.False(t, out.Error.MayHaveBeenCharged)
			assert.Zero(t, out.CreditsSpent)
		})
	}
}

func ptr[T any](v T) *T { return &v }
