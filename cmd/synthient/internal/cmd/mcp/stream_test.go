package mcp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of stream.go: sample_stream.

type sampleOut struct {
	Count       int
	Events      []map[string]any
	Ended       string
	StreamError *toolError `json:"stream_error"`
	credits
}

// A sample ends at count events (10 by default), at its time limit, or
// when the stream fails: after some events, the result keeps them and
// says why; before any, the call is an error.
func TestSampleStream(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	cs, _ := startStdio(t, srv, "--max-retries", "0")

	out := output[sampleOut](t, call(t, cs, "sample_stream", map[string]any{"stream": "anonymizers"}))
	assert.Equal(t, 10, out.Count, "the default count")
	assert.Len(t, out.Events, 10)
	assert.Equal(t, "count", out.Ended)

	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 10 * time.Minute})
	res := call(t, cs, "sample_stream", map[string]any{"stream": "proxies", "timeout_seconds": 1})
	require.False(t, res.IsError, "%s", text(res))
	out = output[sampleOut](t, res)
	assert.Equal(t, "timeout", out.Ended)
	assert.Zero(t, out.Count)
	assert.NotNil(t, out.Events, "events: [], not null")

	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	res = call(t, cs, "sample_stream", map[string]any{"stream": "torrents", "count": 50})
	require.False(t, res.IsError, "%s", text(res))
	out = output[sampleOut](t, res)
	assert.Equal(t, "error", out.Ended)
	assert.Equal(t, 1, out.Count, "the event before the reset")
	require.NotNil(t, out.StreamError)
	assert.Contains(t, text(res), "The stream failed: ")

	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Status: 503})
	res = call(t, cs, "sample_stream", map[string]any{"stream": "ja4t"})
	require.True(t, res.IsError, "%s", text(res))
	e := output[credits](t, res).Error
	require.NotNil(t, e)
	assert.Equal(t, 503, e.Status)
	assert.False(t, e.MayHaveBeenCharged, "a stream is free")
}
