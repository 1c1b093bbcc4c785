package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/synthient-go/synthient/synthienttest"
)

// stream --reconnect ends at once, with exit 1 and one line, when stdout
// cannot be written: reopening the stream cannot mend stdout (it
// reconnected every 2s for ever). The --duration only bounds the run
// before the fix.
func TestStreamReconnectWriteError(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := against(srv, "stream", "proxies", "--reconnect", "--duration", "1m")
	c.stdoutTo = failWriter{errors.New("no space left on device")}
	r := c.run(t)
	wantCode(t, r, exitFailure, c.args...)
	if ls := lines(r.stderr); len(ls) != 1 || !strings.Contains(ls[0], "no space left on device") || strings.Contains(r.stderr, "reconnecting") {
		t.Errorf("stderr: %q, want one line with the write error", r.stderr)
	}
	if n := srv.Arrivals(synthienttest.RouteStream); n != 1 {
		t.Errorf("%d streams opened, want 1", n)
	}
}

// A stream line that holds the key's characters right after a \u escape
// (valid JSON: U+123E, then the rest of the key) is printed redacted and
// still valid JSON, in both output formats.
func TestStreamLineWithKeyStaysJSON(t *testing.T) {
	t.Parallel()
	const key = "123e4567-e89b-12d3-a456-426614174000"
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Status: 200, ContentType: "application/x-ndjson",
				Body: `{"k":"\u` + key + `","K":"` + strings.ToUpper(key) + `"}` + "\n"})
			c := call{args: []string{"--base-url", srv.URL, "-o", output, "stream", "proxies"},
				env: map[string]string{"SYNTHIENT_API_KEY": key}}
			r := c.run(t)
			wantCode(t, r, exitOK, c.args...)
			if want := `{"k":"\u123e[redacted]","K":"[redacted]"}` + "\n"; r.stdout != want {
				t.Errorf("stdout %q, want %q", r.stdout, want)
			}
			checkJSONLines(t, r.stdout)
		})
	}
}
