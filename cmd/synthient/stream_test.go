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
