package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// Tests of feeds.go: the feed tools and get_account.

// list_feed_streams lists every feed of the SDK, in its order, with
// aliases that the stream argument takes.
func TestListFeedStreams(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv)
	out := output[struct {
		Streams []struct {
			Name        string
			Aliases     []string
			Description string
		}
	}](t, call(t, cs, "list_feed_streams", nil))
	require.Len(t, out.Streams, len(synthient.Feeds))
	for i, s := range out.Streams {
		assert.Equal(t, string(synthient.Feeds[i]), s.Name)
		assert.NotEmpty(t, s.Description, s.Name)
		for _, a := range s.Aliases {
			f, err := synthient.ParseFeed(a)
			require.NoError(t, err, "alias %q of %s", a, s.Name)
			assert.Equal(t, synthient.Feeds[i], f, "alias %q", a)
		}
	}
	res := call(t, cs, "list_feed_snapshots", map[string]any{"stream": "tls", "limit": 1})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "honeypot_https", output[struct{ Stream string }](t, res).Stream, "an alias")
	assert.Empty(t, srv.Requests()[:len(srv.Requests())-1], "list_feed_streams sent a request")
}

// A bad argument of a feed tool is an error that names it; nothing is
// sent.
func TestFeedBadArguments(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv)
	tests := []struct {
		tool, argument string
		args           map[string]any
	}{
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
			res := call(t, cs, tt.tool, tt.args)
			require.True(t, res.IsError, "%s", text(res))
			e := output[credits](t, res).Error
			require.NotNil(t, e)
			assert.Equal(t, tt.argument, e.Argument, "%s", text(res))
			assert.Contains(t, e.Hint, "nothing was sent")
		})
	}
	assert.Empty(t, srv.Requests(), "requests sent")
}
