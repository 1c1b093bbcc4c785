package clitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/synthienttest"
)

// ProxyTo returns a reverse proxy to srv that flushes at once and, when
// modify is not nil, rewrites each response with it. Its connections are
// closed when the test ends.
func ProxyTo(t testing.TB, srv *synthienttest.Server, modify func(*http.Response) error) http.Handler {
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

// ServeFront serves h until the test ends and returns its base URL (with
// /api/v4).
func ServeFront(t testing.TB, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL + "/api/v4"
}

// HostileText is what a hostile server puts in every string it can: a
// window title (OSC 0), a clipboard write (OSC 52), a hyperlink (OSC 8), a
// clear screen by CSI as the C1 control U+009B and as a lone 0x9b byte,
// a line separator and DEL.
const HostileText = "\x1b]0;pwned\x07 \x1b]52;c;BASE64\x07 \x1b]8;;http://evil\x1b\\ \u009b2J \x9b2J \u2028 \x7f"

// HostileHeader is the X-Request-Id of a hostile answer: a header value
// cannot hold C0 controls or DEL, but a C1 control and a lone byte pass.
const HostileHeader = "req\u009b2J\x9b2J"

// JSONInner returns s as the inside of a JSON string literal that escapes
// only what JSON requires (quote, backslash, C0 controls), so that C1
// controls, U+2028, DEL and bytes that are not UTF-8 stay raw, as a
// hostile server would send them.
func JSONInner(s string) string {
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

// HostileMarker is appended to every string of an answer, then replaced
// by the raw hostile text.
const HostileMarker = "@HOSTILE@"

// Poison appends HostileMarker to every string in v but those that must
// parse (addresses, export ids, times).
func Poison(v any, key string) any {
	switch v := v.(type) {
	case string:
		if key == "ip" || key == "id" || key == "created_at" {
			return v
		}
		return v + HostileMarker
	case []any:
		for i := range v {
			v[i] = Poison(v[i], key)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = Poison(x, k)
		}
	}
	return v
}

// HostileFront returns a base URL in front of srv that appends HostileText
// to every string of the API's JSON answers, answers a success with
// HostileHeader as its X-Request-Id and an error with none (so the
// problem's instance is the request id).
func HostileFront(t *testing.T, srv *synthienttest.Server) string {
	t.Helper()
	return HostileFrontWith(t, srv, HostileText)
}

// HostileFrontWith is HostileFront appending text.
func HostileFrontWith(t *testing.T, srv *synthienttest.Server, text string) string {
	t.Helper()
	return ServeFront(t, ProxyTo(t, srv, func(resp *http.Response) error { return PoisonResponse(resp, text) }))
}

// PoisonResponse is the hostile server's change to a response of the
// fake: a successful one gets HostileHeader as its X-Request-Id and, in a
// JSON body, text appended to every string that need not parse (see
// Poison); an error response loses its X-Request-Id.
func PoisonResponse(resp *http.Response, text string) error {
	if resp.StatusCode >= 400 {
		resp.Header.Del("X-Request-Id")
		return nil
	}
	resp.Header["X-Request-Id"] = []string{HostileHeader}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // read to its end, or failed: Close says nothing more
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if body, err = json.Marshal(Poison(v, "")); err != nil {
		return err
	}
	body = bytes.ReplaceAll(body, []byte(HostileMarker), []byte(JSONInner(text)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// HostileStream is an NDJSON stream body whose events hold HostileText,
// with tabs between tokens.
func HostileStream() synthienttest.Fault {
	h := JSONInner(HostileText)
	return synthienttest.Fault{
		Status:      200,
		ContentType: "application/x-ndjson",
		Body:        `{"ip":"1.1.1.1",` + "\t" + `"provider":"P` + h + `"}` + "\n" + `{"ip":"8.8.8.8","type":["T` + h + `"]}` + "\n",
	}
}

// CheckHostileVisible checks that the hostile text was printed escaped,
// not dropped: on stdout (JSON-escaped with asJSON) or on stderr, where an
// error is one line.
func CheckHostileVisible(t *testing.T, r Result, asJSON, onStderr bool) {
	t.Helper()
	if onStderr {
		assert.Contains(t, r.Stderr, `\x1b]0;pwned\x07`, "stderr does not show the hostile text escaped")
		assert.Contains(t, r.Stderr, `\u009b2J`, "stderr does not show the hostile text escaped")
		AssertNoForgedLine(t, "stderr", r.Stderr)
		return
	}
	want := `\x1b]0;pwned\x07`
	if asJSON {
		want = `\u001b]0;pwned\u0007`
	}
	assert.Contains(t, r.Stdout, want, "stdout does not show the hostile text escaped")
}

// AssertNoForgedLine checks that no line of out is one a server string
// forged ("synthient: forged line").
func AssertNoForgedLine(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range Lines(out) {
		assert.False(t, strings.HasPrefix(l, "synthient: forged"), "a server string forged a line of its own on %s:\n%s", what, out)
	}
}

// HoldLookups serves a front of srv that holds the bulk lookups from the
// from-th on (counting from 1) until release is called, and returns its
// base URL (with /api/v4) and release. The test's end releases them
// before the front closes, which waits for its requests.
func HoldLookups(t testing.TB, srv *synthienttest.Server, from int32) (base string, release func()) {
	t.Helper()
	held := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	var n atomic.Int32
	proxy := ProxyTo(t, srv, nil)
	base = ServeFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/lookup/ips") && n.Add(1) >= from {
			<-held
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(release) // runs before the front's Close, registered earlier
	return base, release
}

// ClosedPipe returns the write end of a pipe whose reader is closed: a
// stdout whose reader is gone (a pipe into head that exited). Every write
// fails with EPIPE. It is closed when the test ends.
func ClosedPipe(t testing.TB) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	t.Cleanup(func() { _ = w.Close() }) // a second close of a child's stdout fails harmlessly
	return w
}
