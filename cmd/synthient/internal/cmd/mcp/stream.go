package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/streamtext"
)

// The bounds of sample_stream, as the official CLI's.
const (
	maxSampleCount   = 500
	maxSampleSeconds = 120
)

type sampleStreamIn struct {
	Stream         string `json:"stream"`
	Count          int    `json:"count,omitempty" jsonschema:"the events to collect, 1 to 500 (default 10)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"the longest the sample may take, 1 to 120 seconds (default 15): it returns what came by then"`
}

type sampleStreamOut struct {
	Stream string            `json:"stream" jsonschema:"the feed sampled"`
	Count  int               `json:"count" jsonschema:"the events collected"`
	Events []json.RawMessage `json:"events" jsonschema:"the events, as the API sent them"`
	Ended  string            `json:"ended" jsonschema:"why the sample ended: count (count events came), timeout, closed (the API closed the stream) or error (stream_error says why)"`
	// StreamError is set when the stream failed after some events came:
	// the result keeps them, and is no error.
	StreamError *toolError `json:"stream_error,omitempty" jsonschema:"why the stream failed after the events collected"`
	outcome
}

func addSampleStream(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{name: "sample_stream", title: "Sample a feed's real-time events",
		bounds:      []bound{{name: "count", min: 1, max: maxSampleCount, def: 10}, {name: "timeout_seconds", min: 1, max: maxSampleSeconds, def: 15}},
		args:        map[string]string{"stream": streamArg},
		description: `Sample a feed's real-time events: connect to its stream and collect up to count events, for at most timeout_seconds, then return them. Free.`},
		t.sampleStream)
}

func (t *tools) sampleStream(ctx context.Context, in sampleStreamIn) (*sampleStreamOut, error) {
	feed, err := parseStream(in.Stream)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, time.Duration(in.TimeoutSeconds)*time.Second)
	defer cancel()
	out := &sampleStreamOut{Stream: string(feed), Events: []json.RawMessage{}, Ended: "closed"}
	for ev, err := range t.client.StreamRaw(sctx, feed) {
		switch {
		case err != nil && sctx.Err() != nil && ctx.Err() == nil:
			out.Ended = "timeout" // the sample's own time ran out: a clean end
		case err != nil && len(out.Events) == 0:
			return out, err
		case err != nil:
			out.Ended, out.StreamError = "error", t.toolError(err, false)
		default:
			out.Events = append(out.Events, ev)
			if len(out.Events) < in.Count {
				continue
			}
			out.Ended = "count"
		}
		break // every case but an event short of count ends the sample

	}
	out.Count = len(out.Events)
	return out, nil
}

// text renders each event on one line, as the stream command does.
func (o *sampleStreamOut) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events of %s (ended: %s)\n", o.Count, o.Stream, o.Ended)
	for _, ev := range o.Events {
		line, ok := streamtext.EventLine(synthient.Feed(o.Stream), ev)
		if !ok {
			line = string(ev)
		}
		b.WriteString(line + "\n")
	}
	if o.StreamError != nil {
		b.WriteString("The stream failed: " + o.StreamError.Message + "\n")
	}
	return b.String()
}
