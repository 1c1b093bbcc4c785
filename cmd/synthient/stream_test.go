package main

// Tests of stream.go: the stream command.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

// stream --reconnect reopens a stream the server closed cleanly, at once,
// until --max-events.
func TestStreamReconnect(t *testing.T) {
	t.Parallel()
	srv := newServer(t, synthienttest.WithMaxEvents(2))
	r := runSrv(t, srv, "stream", "proxies", "--reconnect", "--max-events", "5")
	requireCode(t, r, 0)
	events(5, 5)(t, r)
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteStream), "streams opened")
	assert.Empty(t, r.stderr, "stderr")

	// Without --reconnect the command ends with the stream.
	r = runSrv(t, srv, "stream", "proxies", "--max-events", "5")
	requireCode(t, r, 0)
	events(2, 2)(t, r)
}

// stream --reconnect whose --duration runs out while it waits to reopen
// after an error exits with that error's code, not 0.
func TestStreamReconnectEndsDown(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteStream, 5, synthienttest.Fault{Status: 429})
	r := runSrv(t, srv, "stream", "proxies", "--reconnect", "--duration", "300ms")
	requireCode(t, r, exitAPI)
	assert.Contains(t, r.stderr, "429 Too Many Requests", "stderr")
	assert.Contains(t, r.stderr, "reconnecting in 2s", "stderr")
	assert.Empty(t, r.stdout, "stdout")
}

// stream --reconnect ends at once, with exit 1 and one line, when stdout
// cannot be written: reopening the stream cannot mend stdout (it
// reconnected every 2s for ever). The --duration only bounds the run
// before the fix.
func TestStreamReconnectWriteError(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := against(srv, "stream", "proxies", "--reconnect", "--duration", "1m")
	c.stdoutTo = failWriter{errNoSpace}
	r := c.run(t)
	requireCode(t, r, exitFailure, c.args...)
	if ls := lines(r.stderr); assert.Len(t, ls, 1, "stderr lines: want one with the write error") {
		assert.Contains(t, ls[0], errNoSpace.Error(), "stderr")
	}
	assert.NotContains(t, r.stderr, "reconnecting", "stderr")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStream), "streams opened")
}

// In JSON, a stream line is printed as the server's JSON with only the
// escapes added: it decodes to the same values (a byte that is not UTF-8
// decodes to U+FFFD either way).
func TestStreamLinesStayJSON(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	fault := hostileStream()
	srv.Inject(synthienttest.RouteStream, 1, fault)
	r := runSrv(t, srv, "-o", "json", "stream", "proxies")
	requireCode(t, r, 0)
	in, out := lines(fault.Body), lines(r.stdout)
	require.Len(t, out, len(in), "lines:\n%s", r.stdout)
	for i := range in {
		want, err := decodeJSON([]byte(in[i]))
		require.NoError(t, err)
		got, err := decodeJSON([]byte(out[i]))
		require.NoError(t, err, "line %d is not JSON: %q", i+1, out[i])
		assert.True(t, jsonEqual(want, got), "line %d decodes to %q, want %q", i+1, got, want)
	}
	checkTerminalSafe(t, "stdout", r.stdout)
}

// A stream line that holds the key's characters right after a \u escape
// (valid JSON: U+123E, then the rest of the key) is printed redacted and
// still valid JSON, in both output formats (in text, an event that has
// none of the feed's fields is printed as its JSON).
func TestStreamLineWithKeyStaysJSON(t *testing.T) {
	t.Parallel()
	const key = configuredKey
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Status: 200, ContentType: "application/x-ndjson",
				Body: `{"k":"\u` + key + `","K":"` + strings.ToUpper(key) + `"}` + "\n"})
			c := call{args: []string{"--base-url", srv.URL, "-o", output, "stream", "proxies"},
				env: map[string]string{"SYNTHIENT_API_KEY": key}}
			r := c.run(t)
			requireCode(t, r, exitOK, c.args...)
			assert.Equal(t, `{"k":"\u123e[redacted]","K":"[redacted]"}`+"\n", r.stdout, "stdout")
			checkJSONLines(t, r.stdout)
		})
	}
}
