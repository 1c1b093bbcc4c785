package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

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
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	proxy := &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:      tr,
		FlushInterval:  -1,
		ModifyResponse: func(resp *http.Response) error { return poisonResponse(resp, text) },
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	return front.URL + "/api/v4"
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

// hostileProblem is a problem+json error body with hostileText in every
// member, and a newline in a validation message that tries to forge a
// line of its own.
func hostileProblem(status int) synthienttest.Fault {
	h := jsonInner(hostileText)
	return synthienttest.Fault{
		Status:      status,
		ContentType: "application/problem+json",
		Body: `{"type":"about:blank","status":` + strconv.Itoa(status) + `,"title":"T` + h + `","detail":"D` + h +
			`","instance":"I` + h + `","errors":{"f` + h + `":["M` + h + jsonInner("\nsynthient: forged line") + `"]}}`,
	}
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

// checkTerminalSafe fails the test if out holds a control character other
// than tab and newline, DEL, a C1 control or a byte that is not UTF-8.
func checkTerminalSafe(t testing.TB, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s holds bytes that are not UTF-8: %q", what, out)
	}
	for i, r := range out {
		if r == '\t' || r == '\n' {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			t.Errorf("%s holds the raw control %U at byte %d: %q", what, r, i, out)
			return
		}
	}
}

// checkJSONLines fails the test unless every line of out is valid JSON
// without a raw U+2028 or U+2029.
func checkJSONLines(t *testing.T, out string) {
	t.Helper()
	for i, l := range lines(out) {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not JSON: %q", i+1, l)
		}
		if strings.ContainsAny(l, "\u2028\u2029") {
			t.Errorf("line %d holds a raw U+2028 or U+2029: %q", i+1, l)
		}
	}
}

// Strings from a hostile server reach neither stdout nor stderr as
// control characters, in text and in JSON output: they are printed as
// visible escapes, JSON stays JSON, and an error stays one line.
func TestHostileServerOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		stdin  string
		route  string // with fault: injected there
		fault  *synthienttest.Fault
		code   int
		stderr bool // the hostile text lands on stderr, not stdout
	}{
		{name: "account", args: []string{"account"}},
		{name: "lookup ip", args: []string{"lookup", "ip", "203.0.113.7"}},
		{name: "lookup ip -v (request id)", args: []string{"-v", "lookup", "ip", "203.0.113.7"}},
		{name: "lookup domain", args: []string{"lookup", "domain", "example.com", "--limit", "3"}},
		{name: "lookup ips", args: []string{"lookup", "ips", "--file", "-"}, stdin: "203.0.113.7\n8.8.8.8\n"},
		{name: "exports list", args: []string{"exports", "list", "proxies", "--limit", "2"}},
		{name: "exports meta", args: []string{"exports", "meta", "proxies", "latest"}},
		{name: "exports download", args: []string{"exports", "download", "proxies", "latest", "--out", "OUT"}},
		{name: "health", args: []string{"health"}},
		{name: "stream", args: []string{"stream", "proxies"}, route: synthienttest.RouteStream, fault: ptrTo(hostileStream())},
		{name: "API error", args: []string{"lookup", "ip", "8.8.8.8"}, route: synthienttest.RouteLookupIP,
			fault: ptrTo(hostileProblem(422)), code: exitAPI, stderr: true},
		{name: "API error on account", args: []string{"account"}, route: synthienttest.RouteAccount,
			fault: ptrTo(hostileProblem(403)), code: exitAPI, stderr: true},
		{name: "failed batch", args: []string{"lookup", "ips", "--file", "-"}, stdin: "1.1.1.1\n", route: synthienttest.RouteLookupIPs,
			fault: ptrTo(hostileProblem(400)), code: exitAPI, stderr: true},
	}
	for _, tt := range tests {
		for _, output := range []string{"text", "json"} {
			t.Run(tt.name+" "+output, func(t *testing.T) {
				t.Parallel()
				srv := newServer(t)
				if tt.fault != nil {
					srv.Inject(tt.route, 1, *tt.fault)
				}
				args := append([]string{"--base-url", hostileFront(t, srv), "-o", output},
					slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))...)
				r := call{args: args, env: keyEnv(srv), stdin: strings.NewReader(tt.stdin)}.run(t)
				wantCode(t, r, tt.code, args...)
				checkTerminalSafe(t, "stdout", r.stdout)
				checkTerminalSafe(t, "stderr", r.stderr)
				if output == "json" || tt.name == "stream" {
					checkJSONLines(t, r.stdout)
				}
				checkHostileVisible(t, r, output == "json" || tt.name == "stream", tt.stderr)
			})
		}
	}
}

// checkHostileVisible checks that the hostile text was printed escaped,
// not dropped: on stdout (JSON-escaped with asJSON) or on stderr, where an
// error is one line.
func checkHostileVisible(t *testing.T, r result, asJSON, onStderr bool) {
	t.Helper()
	if onStderr {
		if !strings.Contains(r.stderr, `\x1b]0;pwned\x07`) || !strings.Contains(r.stderr, `\u009b2J`) {
			t.Errorf("stderr does not show the hostile text escaped:\n%s", r.stderr)
		}
		for _, l := range lines(r.stderr) {
			if strings.HasPrefix(l, "synthient: forged") {
				t.Errorf("a server string forged a line of its own on stderr:\n%s", r.stderr)
			}
		}
		return
	}
	want := `\x1b]0;pwned\x07`
	if asJSON {
		want = `\u001b]0;pwned\u0007`
	}
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stdout does not show the hostile text as %s:\n%s", want, r.stdout)
	}
}

func ptrTo[T any](v T) *T { return &v }

// A stream line is printed as the server's JSON with only the escapes
// added: it decodes to the same values (a byte that is not UTF-8 decodes
// to U+FFFD either way), in text and in JSON output.
func TestStreamLinesStayJSON(t *testing.T) {
	t.Parallel()
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			fault := hostileStream()
			srv.Inject(synthienttest.RouteStream, 1, fault)
			r := runSrv(t, srv, "-o", output, "stream", "proxies")
			wantCode(t, r, 0)
			in, out := lines(fault.Body), lines(r.stdout)
			if len(out) != len(in) {
				t.Fatalf("%d lines, want %d:\n%s", len(out), len(in), r.stdout)
			}
			for i := range in {
				want, err := decodeJSON([]byte(in[i]))
				if err != nil {
					t.Fatal(err)
				}
				got, err := decodeJSON([]byte(out[i]))
				if err != nil {
					t.Fatalf("line %d is not JSON (%v): %q", i+1, err, out[i])
				}
				if !jsonEqual(want, got) {
					t.Errorf("line %d decodes to %q, want %q", i+1, got, want)
				}
			}
			checkTerminalSafe(t, "stdout", r.stdout)
		})
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

// A problem detail that echoes the key is redacted before it is cut to
// 300 bytes, so a key that straddles the cut prints no part of itself,
// and a key echoed in upper case is redacted too: in the error that ends
// the command and in the report of a failed batch.
func TestErrorDetailEchoesKey(t *testing.T) {
	t.Parallel()
	const key = "123e4567-e89b-12d3-a456-426614174000"
	pad := "Invalid API key: " + strings.Repeat("x", 265) + " " // the key starts at byte 283
	tests := []struct {
		name   string
		detail string
		route  string
		args   []string
		stdin  string
	}{
		{"cut", pad + key, synthienttest.RouteAccount, []string{"account"}, ""},
		{"upper case", "Invalid API key: " + strings.ToUpper(key), synthienttest.RouteAccount, []string{"account"}, ""},
		{"upper case and cut", pad + strings.ToUpper(key), synthienttest.RouteAccount, []string{"account"}, ""},
		{"failed batch", pad + key, synthienttest.RouteLookupIPs, []string{"lookup", "ips", "--file", "-"}, "1.1.1.1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Inject(tt.route, 1, synthienttest.Fault{Status: 401, ContentType: "application/problem+json",
				Body: `{"type":"about:blank","status":401,"title":"Unauthorized","detail":"` + tt.detail + `"}`})
			c := call{args: append([]string{"--base-url", srv.URL, "--max-retries", "0"}, tt.args...),
				env: map[string]string{"SYNTHIENT_API_KEY": key}, stdin: strings.NewReader(tt.stdin)}
			r := c.run(t)
			if r.code == exitOK {
				t.Fatalf("exit 0; stderr:\n%s", r.stderr)
			}
			for what, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if strings.Contains(strings.ToLower(out), key[:8]) {
					t.Errorf("%s shows part of the key:\n%s", what, out)
				}
			}
			if !strings.Contains(r.stderr, "Invalid API key: ") || !strings.Contains(r.stderr, "[redac") {
				t.Errorf("stderr does not show the redacted detail:\n%s", r.stderr)
			}
		})
	}
}

// A newline from the server forges no line of output outside tables
// either: in the health status, the "more: --cursor" hint (still one
// shell word) and the summary of a download, on stdout or, with --out -,
// on stderr.
func TestServerNewlineForgesNoLine(t *testing.T) {
	t.Parallel()
	const forged = "\nsynthient: forged line"
	tests := []struct {
		name string
		args []string
		want string // the line the server's string is on, escaped
	}{
		{"health", []string{"health"}, `\x0asynthient: forged line`},
		{"exports list hint", []string{"exports", "list", "proxies", "--limit", "2"}, `more: --cursor '`},
		{"download summary", []string{"exports", "download", "proxies", "latest", "--out", "OUT"}, `\x0asynthient: forged line`},
		{"download summary on stderr", []string{"exports", "download", "proxies", "latest", "--out", "-"}, `\x0asynthient: forged line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			args := append([]string{"--base-url", hostileFrontWith(t, srv, forged)},
				slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))...)
			r := call{args: args, env: keyEnv(srv)}.run(t)
			wantCode(t, r, exitOK, args...)
			outputs := map[string]string{"stderr": r.stderr}
			text := r.stderr
			if !slices.Contains(tt.args, "-") { // else stdout is the export
				outputs["stdout"], text = r.stdout, r.stdout
			}
			for what, out := range outputs {
				for _, l := range lines(out) {
					if strings.HasPrefix(l, "synthient: forged") {
						t.Errorf("a server string forged a line of its own on %s:\n%s", what, out)
					}
				}
			}
			if !strings.Contains(text, tt.want) {
				t.Errorf("the output does not hold %q:\n%s", tt.want, text)
			}
		})
	}
}

// A command whose stdout cannot be written exits 1 with one line on
// stderr, also when it does not check its writes (cobra's help, the
// demo's narration) or its last line fails (health), and fake-server does
// not serve when it cannot say where.
func TestStdoutWriteErrorExits1(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		args        []string
		interrupted bool // run already interrupted: fake-server serves until then
	}{
		{"lookup ip", []string{"--fake", "lookup", "ip", "1.1.1.1"}, false},
		{"health", []string{"--fake", "health"}, false},
		{"--help", []string{"--help"}, false},
		{"help account", []string{"help", "account"}, false},
		{"demo", []string{"demo"}, false},
		{"fake-server", []string{"fake-server", "--listen", "127.0.0.1:0"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := call{args: tt.args, stdoutTo: failWriter{errors.New("no space left on device")}}
			if tt.interrupted {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				c.ctx = ctx
			}
			r := c.run(t)
			wantCode(t, r, exitFailure, tt.args...)
			if ls := lines(r.stderr); len(ls) != 1 || !strings.Contains(ls[0], "no space left on device") {
				t.Errorf("stderr %q, want one line with the write error", r.stderr)
			}
		})
	}
}

// A file error of a download that made no attempt (its temporary file
// could not be created: a read-only file system, a full disk) is a usage
// error, exit 2; one that came later, after bytes were sent, keeps exit 1.
func TestExitCodeFileErrors(t *testing.T) {
	t.Parallel()
	pathErr := func(errno syscall.Errno) error {
		return &fs.PathError{Op: "open", Path: "/ro/f.parquet.1.part", Err: errno}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"read-only file system, nothing sent",
			&synthient.Error{Op: "DownloadExportFile", Message: "creating the file", Err: pathErr(syscall.EROFS)}, exitUsage},
		{"no space to create, nothing sent",
			&synthient.Error{Op: "DownloadExportFile", Message: "creating the file", Err: pathErr(syscall.ENOSPC)}, exitUsage},
		{"no space while writing",
			&synthient.Error{Op: "DownloadExportFile", Attempts: 2, Message: "writing the file", Err: pathErr(syscall.ENOSPC)}, exitFailure},
		{"a file error without the SDK's", fmt.Errorf("reading the addresses: %w", pathErr(syscall.EIO)), exitFailure},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}
