package root_test

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// hostileProblem is a problem+json error body with hostileText in every
// member, and a newline in a validation message that tries to forge a
// line of its own.
func hostileProblem(status int) synthienttest.Fault {
	h := clitest.JSONInner(clitest.HostileText)
	return synthienttest.Fault{
		Status:      status,
		ContentType: "application/problem+json",
		Body: `{"type":"about:blank","status":` + strconv.Itoa(status) + `,"title":"T` + h + `","detail":"D` + h +
			`","instance":"I` + h + `","errors":{"f` + h + `":["M` + h + clitest.JSONInner("\nsynthient: forged line") + `"]}}`,
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
		{name: "stream", args: []string{"stream", "proxies"}, route: synthienttest.RouteStream, fault: ptrTo(clitest.HostileStream())},
		{name: "API error", args: []string{"lookup", "ip", "8.8.8.8"}, route: synthienttest.RouteLookupIP,
			fault: ptrTo(hostileProblem(422)), code: clierr.API, stderr: true},
		{name: "API error on account", args: []string{"account"}, route: synthienttest.RouteAccount,
			fault: ptrTo(hostileProblem(403)), code: clierr.API, stderr: true},
		{name: "failed batch", args: []string{"lookup", "ips", "--file", "-"}, stdin: "1.1.1.1\n", route: synthienttest.RouteLookupIPs,
			fault: ptrTo(hostileProblem(400)), code: clierr.API, stderr: true},
	}
	for _, tt := range tests {
		for _, output := range []string{"text", "json"} {
			t.Run(tt.name+" "+output, func(t *testing.T) {
				t.Parallel()
				srv := clitest.NewServer(t)
				if tt.fault != nil {
					srv.Inject(tt.route, 1, *tt.fault)
				}
				args := append([]string{"--base-url", clitest.HostileFront(t, srv), "-o", output},
					slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))...)
				r := clitest.Call{Args: args, Env: clitest.KeyEnv(srv), Stdin: strings.NewReader(tt.stdin)}.Run(t)
				clitest.RequireCode(t, r, tt.code, args...)
				clitest.CheckTerminalSafe(t, "stdout", r.Stdout)
				clitest.CheckTerminalSafe(t, "stderr", r.Stderr)
				if output == "json" {
					clitest.CheckJSONLines(t, r.Stdout)
				}
				clitest.AssertNoForgedLine(t, "stdout", r.Stdout)
				clitest.CheckHostileVisible(t, r, output == "json", tt.stderr)
			})
		}
	}
}

// A problem detail that echoes the key is redacted before it is cut to
// 300 bytes, so a key that straddles the cut prints no part of itself,
// and a key echoed in upper case is redacted too: in the error that ends
// the command and in the report of a failed batch.
func TestErrorDetailEchoesKey(t *testing.T) {
	t.Parallel()
	const key = clitest.ConfiguredKey
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
			srv := clitest.NewServer(t)
			srv.Inject(tt.route, 1, synthienttest.Fault{Status: 401, ContentType: "application/problem+json",
				Body: `{"type":"about:blank","status":401,"title":"Unauthorized","detail":"` + tt.detail + `"}`})
			c := clitest.Call{Args: append([]string{"--base-url", srv.URL, "--max-retries", "0"}, tt.args...),
				Env: map[string]string{"SYNTHIENT_API_KEY": key}, Stdin: strings.NewReader(tt.stdin)}
			r := c.Run(t)
			require.NotEqual(t, clierr.OK, r.Code, "exit 0; stderr:\n%s", r.Stderr)
			assert.NotContains(t, strings.ToLower(r.Stdout), key[:8], "stdout shows part of the key")
			assert.NotContains(t, strings.ToLower(r.Stderr), key[:8], "stderr shows part of the key")
			assert.Contains(t, r.Stderr, "Invalid API key: ", "stderr does not show the redacted detail")
			assert.Contains(t, r.Stderr, "[redac", "stderr does not show the redacted detail")
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
			srv := clitest.NewServer(t)
			args := append([]string{"--base-url", clitest.HostileFrontWith(t, srv, forged)},
				slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))...)
			r := clitest.Call{Args: args, Env: clitest.KeyEnv(srv)}.Run(t)
			clitest.RequireCode(t, r, clierr.OK, args...)
			clitest.AssertNoForgedLine(t, "stderr", r.Stderr)
			text := r.Stderr
			if !slices.Contains(tt.args, "-") { // else stdout is the export
				clitest.AssertNoForgedLine(t, "stdout", r.Stdout)
				text = r.Stdout
			}
			assert.Contains(t, text, tt.want, "the output")
		})
	}
}
