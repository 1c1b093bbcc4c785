package mcp_test

// The harness of package mcp. Most tests drive the built command (binary)
// with the go-sdk's own client, over stdio and over HTTP, against a fake
// API of the test's own (synthienttest): its credit count is the truth,
// and Inject gives it faults.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// built is the command binary, built once for the package's tests.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// binary returns the path of the synthient command, built from this tree
// once (with -race when the tests run with it).
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "synthient-mcp-test-"); built.err != nil {
			return
		}
		args := []string{"build", "-o", filepath.Join(built.dir, "synthient")}
		if raceEnabled() {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "github.com/synthient-go/synthient/cmd/synthient")...) //nolint:gosec,noctx // the go tool on this module; it ends by itself
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, built.err)
	return filepath.Join(built.dir, "synthient")
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// env is the command's environment: a home of its own, and srv's base
// URL and key (none when srv is nil).
func env(t *testing.T, srv *synthienttest.Server) []string {
	t.Helper()
	home := t.TempDir()
	e := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home}
	if srv != nil {
		e = append(e, "SYNTHIENT_BASE_URL="+srv.URL, "SYNTHIENT_API_KEY="+srv.APIKey)
	}
	return e
}

// newFake returns a fake API closed at the test's end.
func newFake(t *testing.T, opts ...synthienttest.Option) *synthienttest.Server {
	t.Helper()
	srv := synthienttest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv
}

func newClient() *gomcp.Client {
	return gomcp.NewClient(&gomcp.Implementation{Name: "synthient-mcp-test", Version: "1"}, nil)
}

// startStdio runs synthient [global...] mcp args against srv (nil: none),
// its client session connected over stdio, and returns the session and
// the command's stderr.
func startStdio(t *testing.T, srv *synthienttest.Server, args ...string) (*gomcp.ClientSession, *clitest.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"mcp"}, args...)...) //nolint:gosec,noctx // the command under test; the transport ends it
	cmd.Env = env(t, srv)
	stderr := &clitest.SyncBuffer{}
	cmd.Stderr = stderr
	cs, err := newClient().Connect(context.Background(), &gomcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr:\n%s", stderr)
	t.Cleanup(func() {
		_ = cs.Close() // closes stdin and waits for the command: it ends cleanly, or is killed
		checkStderr(t, stderr.String(), srv)
	})
	return cs, stderr
}

// httpServer is synthient mcp --http, running.
type httpServer struct {
	url    string // its endpoint, http://127.0.0.1:PORT/mcp
	stderr *clitest.SyncBuffer
	// stop interrupts the command and returns how it exited, or an error
	// when it did not within 30 s; it is called at the test's end.
	stop func() error
}

var servingRe = regexp.MustCompile(`serving MCP at (http://\S+/mcp)`)

// startHTTP runs synthient mcp --http 127.0.0.1:0 args against srv until
// the test ends, when it is interrupted.
func startHTTP(t *testing.T, srv *synthienttest.Server, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...) //nolint:gosec,noctx // the command under test; interrupted by stop
	cmd.Env = env(t, srv)
	h := &httpServer{stderr: &clitest.SyncBuffer{}}
	cmd.Stderr = h.stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	h.stop = sync.OnceValue(func() error {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			return err
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			return fmt.Errorf("synthient mcp --http did not stop within 30s of an interrupt; killed: %w", <-exited)
		}
	})
	t.Cleanup(func() {
		assert.NoError(t, h.stop(), "synthient mcp --http, interrupted; stderr:\n%s", h.stderr)
		checkStderr(t, h.stderr.String(), srv)
	})
	require.Eventually(t, func() bool { return servingRe.MatchString(h.stderr.String()) }, time.Minute, 10*time.Millisecond,
		"no address on stderr:\n%s", h.stderr)
	h.url = servingRe.FindStringSubmatch(h.stderr.String())[1]
	return h
}

// start runs synthient mcp args against srv on transport, stdio or http,
// and returns a client session of it and its stderr.
func start(t *testing.T, transport string, srv *synthienttest.Server, args ...string) (*gomcp.ClientSession, *clitest.SyncBuffer) {
	t.Helper()
	if transport == "stdio" {
		return startStdio(t, srv, args...)
	}
	h := startHTTP(t, srv, args...)
	return h.connect(t, nil), h.stderr
}

// connect returns a client session of h, closed at the test's end.
func (h *httpServer) connect(t *testing.T, tr *gomcp.StreamableClientTransport) *gomcp.ClientSession {
	t.Helper()
	if tr == nil {
		tr = &gomcp.StreamableClientTransport{}
	}
	tr.Endpoint = h.url
	cs, err := newClient().Connect(context.Background(), tr, nil)
	require.NoError(t, err, "stderr:\n%s", h.stderr)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// checkStderr checks what the command wrote on stderr: never the API key
// or a stack.
func checkStderr(t *testing.T, stderr string, srv *synthienttest.Server) {
	t.Helper()
	if srv != nil {
		assert.NotContains(t, stderr, srv.APIKey, "stderr shows the API key")
	}
	assert.NotContains(t, stderr, "goroutine ", "stderr shows a stack")
}

// call calls tool name with args on cs, and checks the result as every
// result must be (see checkResult).
func call(t *testing.T, cs *gomcp.ClientSession, name string, args any) *gomcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s: a protocol error", name)
	checkResult(t, cs, name, res)
	return res
}

// schemas are the resolved output schemas of the tools, by session.
var schemas sync.Map // *gomcp.ClientSession -> map[string]*jsonschema.Resolved

// checkResult checks that res has structured content that validates
// against the output schema tool name lists, and a text beside it that
// ends with the credits spent and holds no stack.
func checkResult(t *testing.T, cs *gomcp.ClientSession, name string, res *gomcp.CallToolResult) {
	t.Helper()
	m, ok := schemas.Load(cs)
	if !ok {
		list, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		all := map[string]*jsonschema.Resolved{}
		for _, tl := range list.Tools {
			var s jsonschema.Schema
			remarshal(t, tl.OutputSchema, &s)
			r, err := s.Resolve(nil)
			require.NoError(t, err, "%s: its output schema", tl.Name)
			all[tl.Name] = r
		}
		m, _ = schemas.LoadOrStore(cs, all)
	}
	r := m.(map[string]*jsonschema.Resolved)[name]
	require.NotNil(t, r, "%s: no output schema", name)
	require.NotNil(t, res.StructuredContent, "%s: no structured content", name)
	var v any
	remarshal(t, res.StructuredContent, &v)
	require.NoError(t, r.Validate(v), "%s: its structured content does not validate: %s", name, jsonOf(t, v))
	require.Len(t, res.Content, 1, "%s: its content", name)
	text, ok := res.Content[0].(*gomcp.TextContent)
	require.True(t, ok, "%s: its content is not text", name)
	assert.Regexp(t, `\nCredits spent: \d+`, text.Text, "%s: its text", name)
	assert.NotContains(t, text.Text, "goroutine ", "%s: its text", name)
}

// text is res's text.
func text(res *gomcp.CallToolResult) string { return res.Content[0].(*gomcp.TextContent).Text }

// remarshal decodes the JSON of from into to.
func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, to))
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// output decodes res's structured content.
func output[T any](t *testing.T, res *gomcp.CallToolResult) T {
	t.Helper()
	var v T
	remarshal(t, res.StructuredContent, &v)
	return v
}

// credits are the fields of every result.
type credits struct {
	CreditsSpent        int64      `json:"credits_spent"`
	CreditsMayHaveSpent int64      `json:"credits_may_have_spent"`
	CreditsLeft         *int64     `json:"credits_left"`
	Error               *toolError `json:"error"`
}

type toolError struct {
	Message            string   `json:"message"`
	Argument           string   `json:"argument"`
	Status             int      `json:"status"`
	Title              string   `json:"title"`
	Detail             string   `json:"detail"`
	StopReason         string   `json:"stop_reason"`
	RequestID          string   `json:"request_id"`
	RetryAfterSeconds  *float64 `json:"retry_after_seconds"`
	MayHaveBeenCharged bool     `json:"may_have_been_charged"`
	Hint               string   `json:"hint"`
}

// lookupIPOut is lookup_ip's output.
type lookupIPOut struct {
	Results []struct {
		IP              string         `json:"ip"`
		Outcome         string         `json:"outcome"`
		Lookup          map[string]any `json:"lookup"`
		Cached          bool           `json:"cached"`
		CacheAgeSeconds *int64         `json:"cache_age_seconds"`
		Shared          bool           `json:"shared"`
		DuplicateOf     *int           `json:"duplicate_of"`
		Error           *toolError     `json:"error"`
	} `json:"results"`
	LookedUp           int `json:"looked_up"`
	Invalid            int `json:"invalid"`
	NotSent            int `json:"not_sent"`
	MayHaveBeenCharged int `json:"may_have_been_charged"`
	Rejected           int `json:"rejected"`
	credits
}

// ips are lookup_ip's arguments.
func ips(addrs ...string) map[string]any { return map[string]any{"ips": addrs} }

// spent returns the credits the fake's key has spent since it had
// synthienttest.DefaultCredits.
func spent(srv *synthienttest.Server) int64 {
	return synthienttest.DefaultCredits - srv.Credits(srv.APIKey)
}
