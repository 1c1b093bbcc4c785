package main

// The package's test harness: the in-process run of the command and what
// every run checks (call, result, requireCode), the fake API on a fixed
// clock (newServer), the golden files, a reverse proxy in front of the
// fake (proxyTo, serveFront) and the hostile server built on it, and the
// helpers two test files share: key constants, named pipes, failing
// writers, the JSON and terminal checks. A helper one test file uses
// stays in that file.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Keys shaped like the API's (UUIDs) that no output may show.
const (
	// configuredKey is a key a test configures (SYNTHIENT_API_KEY).
	configuredKey = "123e4567-e89b-12d3-a456-426614174000"
	// pastedKey is a key where it does not belong: an argument, a line of
	// an input file, a server's answer.
	pastedKey = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
	// unknownKey is a key the fake does not know.
	unknownKey = "00000000-0000-4000-8000-000000000000"
)

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
// a stack trace, a panic or an API key. It may run on a goroutine of its
// own: it only reports failures, it never stops the test.
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
	cmd := strings.Join(c.args, " ")
	for _, bad := range []string{"goroutine ", "panic"} {
		assert.NotContains(t, r.stderr, bad, "synthient %s: stderr holds %q", cmd, bad)
	}
	for _, s := range secrets {
		if s != "" {
			assert.NotContains(t, r.stderr, s, "synthient %s: stderr holds the API key", cmd)
		}
	}
	return r
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

// requireCode stops the test unless r exited with code, showing the
// command line (args) and its output.
func requireCode(t testing.TB, r result, code int, args ...string) {
	t.Helper()
	require.Equal(t, code, r.code, "synthient %s: exit code\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.stdout, r.stderr)
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
		require.NoError(t, json.Unmarshal([]byte(l), &v), "line %d of the NDJSON output is not JSON: %q", i+1, l)
		ips = append(ips, v.IP)
	}
	return ips
}

// events checks that stdout holds between lo and hi event lines in text,
// each its time and fields (eventLineRe), printed within 10 s.
func events(lo, hi int) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		ls := lines(r.stdout)
		assert.True(t, len(ls) >= lo && len(ls) <= hi, "%d events, want %d to %d:\n%s", len(ls), lo, hi, r.stdout)
		for _, l := range ls {
			assert.Regexp(t, eventLineRe, l, "event line")
		}
		assert.LessOrEqual(t, r.elapsed, 10*time.Second, "took too long")
	}
}

// eventLineRe is the start of an event's line in text: its time, then
// its fields, two spaces apart.
var eventLineRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})?Z  \S`)

// The golden files.

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
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run 'go test ./cmd/synthient -update' to create it")
	assert.Equal(t, string(want), got, "output differs from %s (run with -update if the change is intended)", path)
}

// goldenCase is a command whose text output, against a fake on the fixed
// clock, is testdata/name.golden.
type goldenCase struct {
	name string
	args []string
}

// checkGolden runs each case as a subtest: it exits 0, prints nothing on
// stderr, its stdout matches the golden file byte for byte (normalised),
// and the same command against a second fake on the same clock prints
// the same bytes: the golden file is not stable by luck.
func checkGolden(t *testing.T, tests []goldenCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runSrv(t, newServer(t), tt.args...)
			requireCode(t, r, 0, tt.args...)
			assert.Empty(t, r.stderr, "stderr")
			golden(t, tt.name, normalise(r.stdout))

			again := runSrv(t, newServer(t), tt.args...)
			assert.Equal(t, normalise(r.stdout), normalise(again.stdout), "two runs differ")
		})
	}
}

// Servers in front of the fake.

// proxyTo returns a reverse proxy to srv that flushes at once and, when
// modify is not nil, rewrites each response with it. Its connections are
// closed when the test ends.
func proxyTo(t testing.TB, srv *synthienttest.Server, modify func(*http.Response) error) http.Handler {
	t.Helper()
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	target.Path = ""
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:      tr,
		FlushInterval:  -1,
		ModifyResponse: modify,
	}
}

// serveFront serves h until the test ends and returns its base URL (with
// /api/v4).
func serveFront(t testing.TB, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL + "/api/v4"
}

// hostileText is what a hostile server puts in every string it can: a
// window title (OSC 0), a clipboard write (OSC 52), a hyperlink (OSC 8), a
// clear screen by CSI as the C1 control U+009B and as a lone 0x9b byte,
// a line separator and DEL.
const hostileText = "\x1b]0;pwned\x07 \x1b]52;c;BASE64\x07 \x1b]8;;http://evil\x1b\\ \u009b2J \x9b2J \u2028 \x7f"

// hostileHeader is the X-Request-Id of a hostile answer: a header value
// cannot hold C0 controls or DEL, but a C1 control and a lone byte pass.
const hostileHeader = "req\u009b2J\x9b2J"

// jsonInner returns s as the inside of a JSON string literal that escapes
// only what JSON requires (quote, backslash, C0 controls), so that C1
// controls, U+2028, DEL and bytes that are not UTF-8 stay raw, as a
// hostile server would send them.
func jsonInner(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteString(strconv.FormatInt(int64(c)>>4, 16) + strconv.FormatInt(int64(c)&15, 16))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hostileMarker is appended to every string of an answer, then replaced
// by the raw hostile text.
const hostileMarker = "@HOSTILE@"

// poison appends hostileMarker to every string in v but those that must
// parse (addresses, export ids, times).
func poison(v any, key string) any {
	switch v := v.(type) {
	case string:
		if key == "ip" || key == "id" || key == "created_at" {
			return v
		}
		return v + hostileMarker
	case []any:
		for i := range v {
			v[i] = poison(v[i], key)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = poison(x, k)
		}
	}
	return v
}

// hostileFront returns a base URL in front of srv that appends hostileText
// to every string of the API's JSON answers, answers a success with
// hostileHeader as its X-Request-Id and an error with none (so the
// problem's instance is the request id).
func hostileFront(t *testing.T, srv *synthienttest.Server) string {
	t.Helper()
	return hostileFrontWith(t, srv, hostileText)
}

// hostileFrontWith is hostileFront appending text.
func hostileFrontWith(t *testing.T, srv *synthienttest.Server, text string) string {
	t.Helper()
	return serveFront(t, proxyTo(t, srv, func(resp *http.Response) error { return poisonResponse(resp, text) }))
}

func poisonResponse(resp *http.Response, text string) error {
	if resp.StatusCode >= 400 {
		resp.Header.Del("X-Request-Id")
		return nil
	}
	resp.Header["X-Request-Id"] = []string{hostileHeader}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if body, err = json.Marshal(poison(v, "")); err != nil {
		return err
	}
	body = bytes.ReplaceAll(body, []byte(hostileMarker), []byte(jsonInner(text)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// hostileStream is an NDJSON stream body whose events hold hostileText,
// with tabs between tokens.
func hostileStream() synthienttest.Fault {
	h := jsonInner(hostileText)
	return synthienttest.Fault{
		Status:      200,
		ContentType: "application/x-ndjson",
		Body:        `{"ip":"1.1.1.1",` + "\t" + `"provider":"P` + h + `"}` + "\n" + `{"ip":"8.8.8.8","type":["T` + h + `"]}` + "\n",
	}
}

// Files and writers.

// makeFIFO creates a named pipe at path.
func makeFIFO(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o644))
}

// failWriter fails every write with err.
type failWriter struct{ err error }

// errNoSpace is the error of a stdout that cannot be written.
var errNoSpace = errors.New("no space left on device")

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// writeAll writes p to a safeWriter in pieces cut at the given offsets,
// flushes it, and returns what came out.
func writeAll(t testing.TB, secrets *redactor, p []byte, cuts ...int) string {
	t.Helper()
	var out bytes.Buffer
	w := newSafeWriter(&out, secrets)
	prev := 0
	for _, c := range append(cuts, len(p)) {
		c = min(max(c, prev), len(p))
		n, err := w.Write(p[prev:c])
		require.NoError(t, err, "Write")
		require.Equal(t, c-prev, n, "Write")
		prev = c
	}
	require.NoError(t, w.Flush(), "Flush")
	return out.String()
}

// Output checks.

// checkTerminalSafe fails the test if out holds a control character other
// than tab and newline, DEL, a C1 control or a byte that is not UTF-8.
func checkTerminalSafe(t testing.TB, what, out string) {
	t.Helper()
	assert.True(t, utf8.ValidString(out), "%s holds bytes that are not UTF-8: %q", what, out)
	for i, r := range out {
		if r == '\t' || r == '\n' {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			assert.Fail(t, "a raw control character", "%s holds the raw control %U at byte %d: %q", what, r, i, out)
			return
		}
	}
}

// checkJSONLines fails the test unless every line of out is valid JSON
// without a raw U+2028 or U+2029.
func checkJSONLines(t *testing.T, out string) {
	t.Helper()
	for i, l := range lines(out) {
		assert.True(t, json.Valid([]byte(l)), "line %d is not JSON: %q", i+1, l)
		assert.False(t, strings.ContainsAny(l, "\u2028\u2029"), "line %d holds a raw U+2028 or U+2029: %q", i+1, l)
	}
}

// decodeJSON decodes one JSON document, numbers as json.Number (a number
// too big for a float64 is still valid JSON).
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// addrs returns n distinct public addresses in canonical form, every
// seventh an IPv6 one.
func addrs(n int) []string {
	out := make([]string, n)
	for i := range out {
		if i%7 == 6 {
			out[i] = netip.AddrFrom16([16]byte{0x2a, 0x00, 0x14, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)}).String()
			continue
		}
		v := uint32(46)<<24 + uint32(i)*97
		out[i] = netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
	}
	return out
}

// batchCall is lookup ips --file - against srv, with extra flags.
func batchCall(srv *synthienttest.Server, input string, flags ...string) call {
	c := against(srv, append([]string{"-o", "json", "lookup", "ips", "--file", "-"}, flags...)...)
	c.stdin = strings.NewReader(input)
	return c
}

// readLines returns the lines of a file.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return lines(string(b))
}

// assertAddrs checks that got is want, in order. It names the first
// difference instead of printing thousands of addresses.
func assertAddrs(t testing.TB, want, got []string, what string) bool {
	t.Helper()
	if slices.Equal(got, want) {
		return true
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return strconv.Quote(s[i])
		}
		return "the end"
	}
	return assert.Fail(t, what+": not the addresses wanted, in order",
		"%d addresses, want %d; the first difference is at %d: %s, want %s", len(got), len(want), i, at(got), at(want))
}

// groupRe matches the report of a run of failed addresses: its lines, its
// count, what its outcome means, and the request's error.
var groupRe = regexp.MustCompile(`^synthient: lines? (\d+)(?:-(\d+))?: (\d+) address(?:es)? (.*?): (.*)$`)

// passThrough is a fault that answers normally (the real answer, sent in
// one chunk), to let the first request of a route through an Inject queue.
var passThrough = synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 64 << 20, Delay: time.Millisecond}

// summaryRe matches the summary of lookup ips.
var summaryRe = regexp.MustCompile(`^synthient: (\d+) address(?:es)? read: (\d+) looked up, (\d+) invalid, (\d+) not sent, (\d+) rejected, ` +
	`(\d+) unknown \(possibly charged\), (\d+) duplicates? not sent again; credits: (\d+) spent, (\d+) possibly spent$`)

// ipsSummary is the summary of a lookup ips run.
type ipsSummary struct {
	read, lookedUp, invalid, notSent, rejected, unknown, duplicates, credits, maybeCredits int64
}

// parseSummary finds the summary on stderr and checks that it accounts
// for every address line read, each once.
func parseSummary(t testing.TB, stderr string) ipsSummary {
	t.Helper()
	for _, l := range lines(stderr) {
		m := summaryRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var n [9]int64
		for i := range n {
			n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
		}
		s := ipsSummary{n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8]}
		assert.Equal(t, s.read, s.lookedUp+s.invalid+s.notSent+s.rejected+s.unknown+s.duplicates,
			"the summary's outcomes do not add up to the addresses read: %s", l)
		return s
	}
	require.FailNow(t, "no summary on stderr", "%.2000s", stderr)
	return ipsSummary{}
}

// groups returns the reports of runs of failed addresses on stderr.
func groups(stderr string) [][]string {
	var out [][]string
	for _, l := range lines(stderr) {
		if m := groupRe.FindStringSubmatch(l); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// fileLines returns the lines of a file that may be absent (nil then).
func fileLines(t testing.TB, path string) []string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return readLines(t, path)
}

// outFiles returns paths for --failed and --unknown in a new directory,
// and the flags that name them.
func outFiles(t testing.TB) (failed, unknown string, flags []string) {
	t.Helper()
	dir := t.TempDir()
	failed, unknown = filepath.Join(dir, "failed.txt"), filepath.Join(dir, "unknown.txt")
	return failed, unknown, []string{"--failed", failed, "--unknown", unknown}
}

// cancelAfter is a stdout that cancels the run after n lines, as Ctrl-C
// would once n results were printed.
type cancelAfter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	lines  int
	n      int
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.lines += bytes.Count(p, []byte("\n")); w.lines >= w.n {
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelAfter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
