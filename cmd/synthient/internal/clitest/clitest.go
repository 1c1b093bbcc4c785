// Package clitest is the test harness of the command's packages: the
// in-process run of a command line and what every run checks (Call,
// Result, RequireCode), a command built alone with a runF that captures
// its options (Factory, Parse), the fake API on a fixed clock
// (NewServer), the Golden files, a reverse proxy in front of the fake
// (ProxyTo, ServeFront) and the hostile server built on it, and the
// helpers the tests of two packages share: key constants, named pipes,
// failing writers, the JSON and terminal checks, the parsing of a bulk
// lookup's summary. A helper one test file uses stays in that file.
package clitest

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

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/root"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/synthienttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Keys shaped like the API's (UUIDs) that no output may show.
const (
	// ConfiguredKey is a key a test configures (SYNTHIENT_API_KEY).
	ConfiguredKey = "123e4567-e89b-12d3-a456-426614174000"
	// PastedKey is a key where it does not belong: an argument, a line of
	// an input file, a server's answer.
	PastedKey = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
	// UnknownKey is a key the fake does not know.
	UnknownKey = "00000000-0000-4000-8000-000000000000"
)

// TestNow is the fixed time of the fakes the golden tests run against:
// 14:20 UTC, so the current day has 14 completed hourly exports.
var TestNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

// SyncBuffer is a buffer safe for concurrent use, so a test can poll what
// a running command has written so far.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Call is one in-process run of the command.
type Call struct {
	Args     []string
	Env      map[string]string // what getenv sees; never the real environment
	Stdin    io.Reader
	Terminal bool // what StderrIsTerminal reports
	TTYOut   bool // what StdoutIsTerminal reports
	TTYIn    bool // what StdinIsTerminal reports
	Ctx      context.Context
	Stdout   *SyncBuffer // optional: to watch the output while it runs
	Stderr   *SyncBuffer
	StdoutTo io.Writer // optional: the command's stdout in place of Stdout (a failing writer)
	StderrTo io.Writer // optional: the command's stderr in place of Stderr (a file, which Run's checks do not read)
	// Keychain is the system keychain the command sees; nil for an empty
	// one of its own (never the machine's).
	Keychain config.Keychain
	// Dir is the working directory, where .env is read; "" for a new
	// empty one.
	Dir string
	// Password is what the terminal gives auth login's prompt; nil for no
	// terminal to read.
	Password []byte
	// Setup, when not nil, changes the Env the command runs with.
	Setup func(*root.Env)
}

// Result is what a Call did: its exit code, its output and how long it
// took.
type Result struct {
	Code           int
	Stdout, Stderr string
	Elapsed        time.Duration
}

// Run executes c and checks what every run must hold: stderr never shows
// a stack trace, a panic or an API key. It may run on a goroutine of its
// own: it only reports failures, it never stops the test.
func (c Call) Run(t testing.TB) Result {
	t.Helper()
	env := c.env(t)
	start := time.Now()
	code := root.Run(c.Ctx, c.Args, env)
	r := Result{Code: code, Stdout: c.Stdout.String(), Stderr: c.Stderr.String(), Elapsed: time.Since(start)}
	cmd := strings.Join(c.Args, " ")
	for _, bad := range []string{"goroutine ", "panic"} {
		assert.NotContains(t, r.Stderr, bad, "synthient %s: stderr holds %q", cmd, bad)
	}
	for _, s := range c.secrets() {
		assert.NotContains(t, r.Stderr, s, "synthient %s: stderr holds the API key", cmd)
	}
	return r
}

// env fills in what c leaves out (a background context, an empty stdin,
// buffers for the output, an empty keychain and working directory of its
// own), and returns the Env the command runs with.
func (c *Call) env(t testing.TB) root.Env {
	t.Helper()
	if c.Ctx == nil {
		c.Ctx = context.Background()
	}
	if c.Stdin == nil {
		c.Stdin = strings.NewReader("")
	}
	if c.Stdout == nil {
		c.Stdout = &SyncBuffer{}
	}
	if c.Stderr == nil {
		c.Stderr = &SyncBuffer{}
	}
	stdout, stderr := c.streams()
	env := root.Env{System: iostreams.System{
		Stdin:            c.Stdin,
		Stdout:           stdout,
		Stderr:           stderr,
		Getenv:           func(k string) string { return c.Env[k] },
		StdinIsTerminal:  func() bool { return c.TTYIn },
		StdoutIsTerminal: func() bool { return c.TTYOut },
		StderrIsTerminal: func() bool { return c.Terminal },
	}, Keychain: c.Keychain, Dir: c.Dir}
	if env.Keychain == nil {
		env.Keychain = &Keychain{}
	}
	if env.Dir == "" {
		env.Dir = t.TempDir()
	}
	if c.Password != nil {
		env.ReadPassword = func(context.Context) ([]byte, error) { return c.Password, nil }
	}
	if c.Setup != nil {
		c.Setup(&env)
	}
	return env
}

// streams returns the command's stdout and stderr: StdoutTo and StderrTo
// when set, else Stdout and Stderr.
func (c *Call) streams() (stdout, stderr io.Writer) {
	stdout, stderr = c.Stdout, c.Stderr
	if c.StdoutTo != nil {
		stdout = c.StdoutTo
	}
	if c.StderrTo != nil {
		stderr = c.StderrTo
	}
	return stdout, stderr
}

// secrets are the keys c gives, which no output may show:
// SYNTHIENT_API_KEY and --api-key's.
func (c *Call) secrets() []string {
	var secrets []string
	if k := c.Env["SYNTHIENT_API_KEY"]; k != "" {
		secrets = append(secrets, k)
	}
	for i, a := range c.Args {
		if a == "--api-key" && i+1 < len(c.Args) && c.Args[i+1] != "" {
			secrets = append(secrets, c.Args[i+1])
		}
		if v, ok := strings.CutPrefix(a, "--api-key="); ok && v != "" {
			secrets = append(secrets, v)
		}
	}
	return secrets
}

// HangBound bounds a wait for a command that could hang (on a named
// pipe, a lock, a signal not acted on): only a hang reaches it, however
// loaded the machine.
const HangBound = 2 * time.Minute

// Bounded runs c as Run does, on a goroutine, and fails the test when it
// has not returned within HangBound.
func Bounded(t testing.TB, c Call) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- c.Run(t) }()
	select {
	case r := <-done:
		return r
	case <-time.After(HangBound):
		t.Fatalf("synthient %s: still running after %v: it hangs", strings.Join(c.Args, " "), HangBound)
		return Result{}
	}
}

// RepoFile returns the path of the file rel (slash-separated) of the
// repository: rel below the directory of the module's go.mod, found
// walking up from the test's directory.
func RepoFile(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod")) //nolint:gosec // the go.mod of a directory above the test's
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/synthient-go/synthient\n")) {
			return filepath.Join(dir, filepath.FromSlash(rel))
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod of the module above the test's directory")
		dir = parent
	}
}

// Root returns the synthient command tree, as a command line runs it, on
// streams that read and write nothing: for tests that walk the tree.
func Root() *cobra.Command {
	return root.NewCmdRoot(Factory(iostreams.System{}))
}

// RunArgs runs the command with getenv seeing env.
func RunArgs(t testing.TB, env map[string]string, args ...string) Result {
	t.Helper()
	return Call{Args: args, Env: env}.Run(t)
}

// NewServer starts a fake on a fixed clock at TestNow, closed when the test
// ends.
func NewServer(t testing.TB, opts ...synthienttest.Option) *synthienttest.Server {
	t.Helper()
	clk := synthienttest.NewManualClock(TestNow)
	srv := synthienttest.NewServer(append([]synthienttest.Option{synthienttest.WithClock(clk.Now)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

// KeyEnv is the environment that gives srv's key.
func KeyEnv(srv *synthienttest.Server) map[string]string {
	return map[string]string{"SYNTHIENT_API_KEY": srv.APIKey}
}

// Against returns a Call of args aimed at srv: --base-url srv.URL and
// SYNTHIENT_API_KEY=srv.APIKey.
func Against(srv *synthienttest.Server, args ...string) Call {
	return Call{Args: append([]string{"--base-url", srv.URL}, args...), Env: KeyEnv(srv)}
}

// RunSrv runs args against srv.
func RunSrv(t testing.TB, srv *synthienttest.Server, args ...string) Result {
	t.Helper()
	return Against(srv, args...).Run(t)
}

// RequireCode stops the test unless r exited with code, showing the
// command line (args) and its output.
func RequireCode(t testing.TB, r Result, code int, args ...string) {
	t.Helper()
	require.Equal(t, code, r.Code, "synthient %s: exit code\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Stdout, r.Stderr)
}

// RequireFails stops the test unless r exited with code, and fails it
// unless r's stderr holds want.
func RequireFails(t testing.TB, r Result, code int, want string, args ...string) {
	t.Helper()
	RequireCode(t, r, code, args...)
	assert.Contains(t, r.Stderr, want, "synthient %s: stderr", strings.Join(args, " "))
}

// Lines splits output into its lines, without the final newline.
func Lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// NDJSONIPs parses NDJSON lookup results and returns their "ip" members in
// order.
func NDJSONIPs(t testing.TB, out string) []string {
	t.Helper()
	var ips []string
	for i, l := range Lines(out) {
		var v struct {
			IP string `json:"ip"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &v), "line %d of the NDJSON output is not JSON: %q", i+1, l)
		ips = append(ips, v.IP)
	}
	return ips
}

// Events checks that stdout holds between lo and hi event lines in text,
// each its time and fields (EventLineRe), printed within 2 minutes: a
// bound that only a hang outlasts.
func Events(lo, hi int) func(t *testing.T, r Result) {
	return func(t *testing.T, r Result) {
		t.Helper()
		ls := Lines(r.Stdout)
		assert.True(t, len(ls) >= lo && len(ls) <= hi, "%d Events, want %d to %d:\n%s", len(ls), lo, hi, r.Stdout)
		for _, l := range ls {
			assert.Regexp(t, EventLineRe, l, "event line")
		}
		assert.Less(t, r.Elapsed, 2*time.Minute, "the stream hangs")
	}
}

// EventLineRe is the start of an event's line in text: its time, then
// its fields, two spaces apart.
var EventLineRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})?Z  \S`)

// The golden files.

var (
	// RequestIDRe matches a request id of the fake.
	RequestIDRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	portRe      = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	cursorRe    = regexp.MustCompile(`--cursor \S+`)
)

// Normalise replaces what changes from run to run: request ids (only where
// they follow "request id"), loopback ports and listing cursors (signed
// with a per-server secret).
func Normalise(s string) string {
	s = regexp.MustCompile(`request id `+RequestIDRe.String()).ReplaceAllString(s, "request id <REQUEST-ID>")
	s = portRe.ReplaceAllString(s, "127.0.0.1:<PORT>")
	s = cursorRe.ReplaceAllString(s, "--cursor <CURSOR>")
	return s
}

// Golden compares got with testdata/name.golden, or rewrites the file with
// -update.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		// Files of the repository, to commit: the modes of the others.
		require.NoError(t, os.MkdirAll("testdata", 0o755))         //nolint:gosec // see above
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644)) //nolint:gosec // see above
		return
	}
	want, err := os.ReadFile(path) //nolint:gosec // testdata/NAME.golden, NAME the test's
	require.NoError(t, err, "run 'go test ./cmd/synthient -update' to create it")
	assert.Equal(t, string(want), got, "output differs from %s (run with -update if the change is intended)", path)
}

// GoldenCase is a command whose text output, against a fake on the fixed
// clock, is testdata/name.golden.
type GoldenCase struct {
	Name string
	Args []string
}

// CheckGolden runs each case as a subtest: it exits 0, prints nothing on
// stderr, its stdout matches the golden file byte for byte (normalised),
// and the same command against a second fake on the same clock prints
// the same bytes: the golden file is not stable by luck.
func CheckGolden(t *testing.T, tests []GoldenCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			r := RunSrv(t, NewServer(t), tt.Args...)
			RequireCode(t, r, 0, tt.Args...)
			assert.Empty(t, r.Stderr, "stderr")
			Golden(t, tt.Name, Normalise(r.Stdout))

			again := RunSrv(t, NewServer(t), tt.Args...)
			assert.Equal(t, Normalise(r.Stdout), Normalise(again.Stdout), "two runs differ")
		})
	}
}

// Servers in front of the fake.

// Files and writers.

// Output checks.
