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
