package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of mcp.go: the command, its flags, and every tool on both
// transports.

// Flags that cannot be honoured are refused (exit 2) before anything is
// served or sent.
func TestFlagsRefused(t *testing.T) {
	t.Parallel()
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("0123456789abcdef0123\n"), 0o600))
	short := filepath.Join(t.TempDir(), "short")
	require.NoError(t, os.WriteFile(short, []byte("secret\n"), 0o600))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-credits-per-session", "-1"}, "must not be negative"},
		{[]string{"--cache-ttl", "-1s"}, "--cache-ttl must not be negative"},
		{[]string{"--token-file", token}, "apply to --http"},
		{[]string{"--allow-host", "mcp.example.com"}, "apply to --http"},
		{[]string{"--http", "0.0.0.0:0"}, "not a loopback address: serving it needs --token-file"},
		{[]string{"--http", "mcp.example.com:0"}, "not a loopback address"},
		{[]string{"--http", "no address"}, "is not an address"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", short}, "give one of 16 or more"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", filepath.Join(t.TempDir(), "none")}, "--token-file: open"},
		{[]string{"--api-key-file", "-"}, "--api-key-file - cannot read stdin: mcp reads its MCP messages there"},
		{[]string{"-o", "json"}, "--output does not apply to mcp"},
		{[]string{"--jq", ".x"}, "--jq does not apply to mcp"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			args := append([]string{"mcp"}, tt.args...)
			if tt.args[0] == "-o" || tt.args[0] == "--jq" || tt.args[0] == "--api-key-file" {
				args = append(tt.args, "mcp")
			}
			r := clitest.Against(srv, args...).Run(t)
			clitest.RequireCode(t, r, clierr.Usage, args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Empty(t, r.Stdout, "stdout")
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}

// The tools, as tools/list gives them: the official CLI's names, each
// with an output schema; read-only; the billed ones not idempotent and
// saying what they cost.
func TestToolsList(t *testing.T) {
	t.Parallel()
	cs, _ := startStdio(t, nil, "--fake")
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		billed := tl.Name == "lookup_ip" || tl.Name == "lookup_domain"
		require.NotNil(t, tl.Annotations, tl.Name)
		assert.True(t, tl.Annotations.ReadOnlyHint, "%s: readOnlyHint", tl.Name)
		assert.Equal(t, !billed, tl.Annotations.IdempotentHint, "%s: idempotentHint", tl.Name)
		assert.NotNil(t, tl.OutputSchema, "%s: no output schema", tl.Name)
		// An optional field is left out when empty, never null: one type.
		var out struct {
			Properties map[string]struct{ Type any } `json:"properties"`
		}
		remarshal(t, tl.OutputSchema, &out)
		assert.Equal(t, "integer", out.Properties["credits_left"].Type, "%s: credits_left", tl.Name)
		assert.Equal(t, "object", out.Properties["error"].Type, "%s: error", tl.Name)
		if billed {
			assert.Regexp(t, `Cost: 1 credit`, tl.Description, tl.Name)
		} else {
			assert.Contains(t, tl.Description, "Free", tl.Name)
		}
	}
	assert.ElementsMatch(t, []string{"lookup_ip", "lookup_domain", "get_account", "list_feed_streams",
		"list_feed_snapshots", "feed_snapshot_meta", "sample_stream"}, names)
}

// Every tool, over stdio and over HTTP: each result validates against
// its tool's output schema, and the credits the results say were spent
// are the credits the fake took.
func TestEveryTool(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t)
			cs, _ := start(t, transport, srv)
			var total int64
			for _, c := range everyCall {
				t.Run(c.name, func(t *testing.T) {
					res := call(t, cs, c.name, c.args)
					require.False(t, res.IsError, "%s", text(res))
					total += output[credits](t, res).CreditsSpent
					c.check(t, res)
				})
			}
			assert.Equal(t, int64(4), total, "credits the results say were spent")
			assert.Equal(t, total, spent(srv), "credits the fake took")
		})
	}
}

// everyCall is a call of each tool, and what its result holds.
var everyCall = []struct {
	name  string
	args  any
	check func(t *testing.T, res *gomcp.CallToolResult)
}{
	{"get_account", map[string]any{}, func(t *testing.T, res *gomcp.CallToolResult) {
		assert.Contains(t, text(res), "Grace Hopper")
		assert.Equal(t, "grace@example.com", output[struct{ Email string }](t, res).Email)
	}},
	{"list_feed_streams", nil, func(t *testing.T, res *gomcp.CallToolResult) {
		assert.Len(t, output[struct{ Streams []any }](t, res).Streams, 8)
	}},
	{"list_feed_snapshots", map[string]any{"stream": "proxy", "limit": 2}, func(t *testing.T, res *gomcp.CallToolResult) {
		out := output[struct {
			Stream     string
			Feeds      []struct{ ID string }
			NextCursor string `json:"next_cursor"`
		}](t, res)
		assert.Equal(t, "proxies", out.Stream)
		assert.Len(t, out.Feeds, 2)
		assert.NotEmpty(t, out.NextCursor)
		assert.Contains(t, text(res), "More: call again with cursor "+out.NextCursor)
	}},
	{"feed_snapshot_meta", map[string]any{"stream": "honeypot_http", "date": "latest"}, func(t *testing.T, res *gomcp.CallToolResult) {
		assert.Regexp(t, `^[0-9a-f]{64}$`, output[struct{ Checksum string }](t, res).Checksum)
		assert.Contains(t, text(res), "SHA-256")
	}},
	{"sample_stream", map[string]any{"stream": "proxies", "count": 3, "timeout_seconds": 60}, func(t *testing.T, res *gomcp.CallToolResult) {
		out := output[struct {
			Count  int
			Events []map[string]any
			Ended  string
		}](t, res)
		assert.Equal(t, 3, out.Count)
		assert.Len(t, out.Events, 3)
		assert.Equal(t, "count", out.Ended)
	}},
	{"lookup_ip", ips("8.8.8.8"), func(t *testing.T, res *gomcp.CallToolResult) {
		out := output[lookupIPOut](t, res)
		require.Len(t, out.Results, 1)
		assert.Equal(t, "looked_up", out.Results[0].Outcome)
		assert.Equal(t, "8.8.8.8", out.Results[0].Lookup["ip"])
		assert.Equal(t, int64(1), out.CreditsSpent)
		assert.Nil(t, out.CreditsLeft, "credits_left without a budget")
		assert.Contains(t, text(res), "AS15169")
	}},
	{"lookup_ip", ips("1.1.1.1", "9.9.9.9"), func(t *testing.T, res *gomcp.CallToolResult) {
		out := output[lookupIPOut](t, res)
		assert.Equal(t, 2, out.LookedUp)
		assert.Equal(t, int64(2), out.CreditsSpent, "ceil(0.9 x 2)")
	}},
	{"lookup_domain", map[string]any{"domain": "example.com", "limit": 3}, func(t *testing.T, res *gomcp.CallToolResult) {
		out := output[struct {
			Domain       string
			RecentEvents []any `json:"recent_events"`
			Cached       bool
			credits
		}](t, res)
		assert.Equal(t, "example.com", out.Domain)
		assert.Len(t, out.RecentEvents, 3)
		assert.False(t, out.Cached)
		assert.Equal(t, int64(1), out.CreditsSpent)
	}},
}

// --fake serves the in-process fake: an agent can be tried without a key.
func TestFake(t *testing.T) {
	t.Parallel()
	cs, stderr := startStdio(t, nil, "--fake")
	res := call(t, cs, "get_account", nil)
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(synthienttest.DefaultCredits), output[struct {
		LookupQuota struct{ Credits int64 } `json:"lookup_quota"`
	}](t, res).LookupQuota.Credits)
	res = call(t, cs, "lookup_ip", ips("203.0.113.7"))
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, int64(1), output[credits](t, res).CreditsSpent)
	assert.Regexp(t, `(?m)^synthient mcp: serving MCP on stdio`, stderr.String())
}
