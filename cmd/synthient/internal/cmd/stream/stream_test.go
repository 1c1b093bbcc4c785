package stream_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of stream.go: the stream command.

// stream --reconnect reopens a stream the server closed cleanly, at once,
// until --max-events.
func TestStreamReconnect(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t, synthienttest.WithMaxEvents(2))
	r := clitest.RunSrv(t, srv, "stream", "proxies", "--reconnect", "--max-events", "5")
	clitest.RequireCode(t, r, 0)
	clitest.Events(5, 5)(t, r)
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteStream), "streams opened")
	assert.Empty(t, r.Stderr, "stderr")

	// Without --reconnect the command ends with the stream.
	r = clitest.RunSrv(t, srv, "stream", "proxies", "--max-events", "5")
	clitest.RequireCode(t, r, 0)
	clitest.Events(2, 2)(t, r)
}

// stream --reconnect whose --duration runs out while it waits to reopen
// after an error exits with that error's code, not 0.
func TestStreamReconnectEndsDown(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteStream, 5, synthienttest.Fault{Status: 429})
	r := clitest.RunSrv(t, srv, "stream", "proxies", "--reconnect", "--duration", "300ms")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "429 Too Many Requests", "stderr")
	assert.Contains(t, r.Stderr, "reconnecting in 2s", "stderr")
	assert.Empty(t, r.Stdout, "stdout")
}

// stream --reconnect ends at once, with exit 1 and one line, when stdout
// cannot be written: reopening the stream cannot mend stdout (it
// reconnected every 2s for ever). The --duration only bounds the run
// before the fix.
func TestStreamReconnectWriteError(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	c := clitest.Against(srv, "stream", "proxies", "--reconnect", "--duration", "1m")
	c.StdoutTo = clitest.FailWriter{Err: clitest.ErrNoSpace}
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.Failure, c.Args...)
	if ls := clitest.Lines(r.Stderr); assert.Len(t, ls, 1, "stderr lines: want one with the write error") {
		assert.Contains(t, ls[0], clitest.ErrNoSpace.Error(), "stderr")
	}
	assert.NotContains(t, r.Stderr, "reconnecting", "stderr")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStream), "streams opened")
}

// In JSON, a stream line is printed as the server's JSON with only the
// escapes added: it decodes to the same values (a byte that is not UTF-8
// decodes to U+FFFD either way).
func TestStreamLinesStayJSON(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	fault := clitest.HostileStream()
	srv.Inject(synthienttest.RouteStream, 1, fault)
	r := clitest.RunSrv(t, srv, "-o", "json", "stream", "proxies")
	clitest.RequireCode(t, r, 0)
	in, out := clitest.Lines(fault.Body), clitest.Lines(r.Stdout)
	require.Len(t, out, len(in), "lines:\n%s", r.Stdout)
	for i := range in {
		want, err := clitest.DecodeJSON([]byte(in[i]))
		require.NoError(t, err)
		got, err := clitest.DecodeJSON([]byte(out[i]))
		require.NoError(t, err, "line %d is not JSON: %q", i+1, out[i])
		assert.True(t, clitest.JSONEqual(want, got), "line %d decodes to %q, want %q", i+1, got, want)
	}
	clitest.CheckTerminalSafe(t, "stdout", r.Stdout)
}

// A stream line that holds the key's characters right after a \u escape
// (valid JSON: U+123E, then the rest of the key) is printed redacted and
// still valid JSON, in both output formats (in text, an event that has
// none of the feed's fields is printed as its JSON).
func TestStreamLineWithKeyStaysJSON(t *testing.T) {
	t.Parallel()
	const key = clitest.ConfiguredKey
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Status: 200, ContentType: "application/x-ndjson",
				Body: `{"k":"\u` + key + `","K":"` + strings.ToUpper(key) + `"}` + "\n"})
			c := clitest.Call{Args: []string{"--base-url", srv.URL, "-o", output, "stream", "proxies"},
				Env: map[string]string{"SYNTHIENT_API_KEY": key}}
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK, c.Args...)
			assert.Equal(t, `{"k":"\u123e[redacted]","K":"[redacted]"}`+"\n", r.Stdout, "stdout") //nolint:testifylint // the bytes printed are the point: JSONEq compares what they decode to
			clitest.CheckJSONLines(t, r.Stdout)
		})
	}
}
