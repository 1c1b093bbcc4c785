package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/synthient-go/synthient/synthienttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testNow is the fixed time of the fakes the golden tests run against:
// 14:20 UTC, so the current day has 14 completed hourly exports.
var testNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

// syncBuffer is a buffer safe for concurrent use, so a test can poll what
// a running command has written so far.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// call is one in-process run of the command.
type call struct {
	args     []string
	env      map[string]string // what getenv sees; never the real environment
	stdin    io.Reader
	terminal bool // what stderrIsTerminal reports
	ttyOut   bool // what stdoutIsTerminal reports
	ctx      context.Context
	stdout   *syncBuffer // optional: to watch the output while it runs
	stderr   *syncBuffer
	stdoutTo io.Writer // optional: the command's stdout in place of stdout (a failing writer)
}

type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// run executes c and checks what every run must hold: stderr never shows
// a stack trace, a panic or an API key.
func (c call) run(t testing.TB) result {
	t.Helper()
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	if c.stdin == nil {
		c.stdin = strings.NewReader("")
	}
	if c.stdout == nil {
		c.stdout = &syncBuffer{}
	}
	if c.stderr == nil {
		c.stderr = &syncBuffer{}
	}
	var stdout io.Writer = c.stdout
	if c.stdoutTo != nil {
		stdout = c.stdoutTo
	}
	e := &env{
		stdin:  c.stdin,
		stdout: stdout,
		stderr: c.stderr,
		getenv: func(k string) string { return c.env[k] },
		stderrIsTerminal: func() bool {
			return c.terminal
		},
		stdoutIsTerminal: func() bool {
			return c.ttyOut
		},
	}
	start := time.Now()
	code := run(c.ctx, c.args, e)
	r := result{code: code, stdout: c.stdout.String(), stderr: c.stderr.String(), elapsed: time.Since(start)}
	secrets := []string{c.env["SYNTHIENT_API_KEY"]}
	for i, a := range c.args {
		if a == "--api-key" && i+1 < len(c.args) {
			secrets = append(secrets, c.args[i+1])
		}
		if v, ok := strings.CutPrefix(a, "--api-key="); ok {
			secrets = append(secrets, v)
		}
	}
	checkStderr(t, c.args, r.stderr, secrets...)
	return r
}

// checkStderr fails the test if stderr holds a stack trace, a panic or one
// of the secrets.
func checkStderr(t testing.TB, args []string, stderr string, secrets ...string) {
	t.Helper()
	for _, bad := range []string{"goroutine ", "panic"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("synthient %s: stderr holds %q:\n%s", strings.Join(args, " "), bad, stderr)
		}
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(stderr, s) {
			t.Errorf("synthient %s: stderr holds the API key %q:\n%s", strings.Join(args, " "), s, stderr)
		}
	}
}

// runArgs runs the command with getenv seeing env.
func runArgs(t testing.TB, env map[string]string, args ...string) result {
	t.Helper()
	return call{args: args, env: env}.run(t)
}

// newServer starts a fake on a fixed clock at testNow, closed when the test
// ends.
func newServer(t testing.TB, opts ...synthienttest.Option) *synthienttest.Server {
	t.Helper()
	clk := synthienttest.NewManualClock(testNow)
	srv := synthienttest.NewServer(append([]synthienttest.Option{synthienttest.WithClock(clk.Now)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

// keyEnv is the environment that gives srv's key.
func keyEnv(srv *synthienttest.Server) map[string]string {
	return map[string]string{"SYNTHIENT_API_KEY": srv.APIKey}
}

// against returns a call of args aimed at srv: --base-url srv.URL and
// SYNTHIENT_API_KEY=srv.APIKey.
func against(srv *synthienttest.Server, args ...string) call {
	return call{args: append([]string{"--base-url", srv.URL}, args...), env: keyEnv(srv)}
}

// runSrv runs args against srv.
func runSrv(t testing.TB, srv *synthienttest.Server, args ...string) result {
	t.Helper()
	return against(srv, args...).run(t)
}

// wantCode fails the test unless r exited with code.
func wantCode(t testing.TB, r result, code int, args ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("synthient %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
}

// lines splits output into its lines, without the final newline.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// ndjsonIPs parses NDJSON lookup results and returns their "ip" members in
// order.
func ndjsonIPs(t testing.TB, out string) []string {
	t.Helper()
	var ips []string
	for i, l := range lines(out) {
		var v struct {
			IP string `json:"ip"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d of the NDJSON output is not JSON (%v): %q", i+1, err, l)
		}
		ips = append(ips, v.IP)
	}
	return ips
}

var (
	requestIDRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	portRe      = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	cursorRe    = regexp.MustCompile(`--cursor \S+`)
)

// normalise replaces what changes from run to run: request ids (only where
// they follow "request id"), loopback ports and listing cursors (signed
// with a per-server secret).
func normalise(s string) string {
	s = regexp.MustCompile(`request id `+requestIDRe.String()).ReplaceAllString(s, "request id <REQUEST-ID>")
	s = portRe.ReplaceAllString(s, "127.0.0.1:<PORT>")
	s = cursorRe.ReplaceAllString(s, "--cursor <CURSOR>")
	return s
}

// golden compares got with testdata/name.golden, or rewrites the file with
// -update.
func golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test ./cmd/synthient -update' to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}
