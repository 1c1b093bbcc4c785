package root_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of run.go: exit codes, and what Run does to every command's output
// (one error line, write errors).

// closedURL returns a base URL on a loopback port nothing listens on.
func closedURL(t testing.TB) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close(), "the port must be free again")
	return "http://" + addr + "/api/v4"
}

// slicesReplace returns s with every old replaced by new.
func slicesReplace(s []string, old, new string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		if v == old {
			v = new
		}
		out[i] = v
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// Usage errors and invalid arguments exit 2, with a message, and send
// nothing to the API.
//
//nolint:tparallel // each case counts the requests the shared fake saw
func TestExitCodeUsage(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.parquet")
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"unknown command", []string{"bogus"}, `unknown command "bogus"`},
		{"unknown exports subcommand", []string{"exports", "delete", "proxies"}, `unknown command "delete"`},
		{"unknown lookup subcommand", []string{"lookup", "ipz", "1.1.1.1"}, `unknown command "ipz"`},
		{"unknown flag", []string{"account", "--bogus"}, "unknown flag: --bogus"},
		{"unknown shorthand", []string{"-z", "account"}, "unknown shorthand"},
		{"flag needs an argument", []string{"account", "--timeout"}, "flag needs an argument"},
		{"bad duration", []string{"--timeout", "soon", "account"}, "invalid argument"},
		{"bad integer", []string{"lookup", "domain", "example.com", "--limit", "many"}, "invalid argument"},
		{"lookup ip without address", []string{"lookup", "ip"}, "lookup ip needs addresses: ADDR... or - (stdin), or pipe them in"},
		{"lookup ip with - and an address", []string{"lookup", "ip", "-", "8.8.8.8"}, "- reads the addresses from stdin: give it alone"},
		{"lookup domain without name", []string{"lookup", "domain"}, "missing NAME: lookup domain takes NAME (see 'synthient lookup domain --help', https://"},
		{"account with an argument", []string{"account", "extra"}, `account takes no argument, not "extra" (see 'synthient account --help'`},
		{"exports meta without id", []string{"exports", "meta", "proxies"}, "missing ID: exports meta takes FEED ID"},
		{"exports meta with three", []string{"exports", "meta", "proxies", "latest", "x"}, `too many arguments (3): exports meta takes FEED ID, not "proxies" "latest" "x"`},
		{"exports head without a source", []string{"exports", "head"}, "missing FILE, or FEED ID: exports head takes {FILE | FEED ID}"},
		{"a mistyped command", []string{"lookupp", "ip", "1.1.1.1"}, `unknown command "lookupp" for "synthient"; did you mean "lookup"? (see 'synthient --help', https://`},
		{"a mistyped subcommand", []string{"exports", "lst", "proxies"}, `unknown command "lst" for "synthient exports"; did you mean "list"? (see 'synthient exports --help'`},
		{"exports list without feed", []string{"exports", "list"}, "missing FEED: exports list takes FEED"},
		{"stream without feed", []string{"stream"}, "missing FEED: stream takes FEED (see 'synthient stream --help', https://github.com/synthient-go/synthient/blob/main/docs/cli.md#streams)"},
		{"bad --output", []string{"--output", "yaml", "account"}, `--output must be text, json or csv, not "yaml"`},
		{"bad -o", []string{"-o", "xml", "lookup", "ip", "1.1.1.1"}, "--output must be text, json or csv"},
		{"-o for --out", []string{"exports", "download", "proxies", "latest", "-o", "p.parquet"},
			`--output (-o) is the output format, text, json or csv, not "p.parquet": to write a file, use --out p.parquet`},
		{"--limit 0 on domains", []string{"lookup", "domain", "example.com", "--limit", "0"}, "--limit must be 1 to 1000, not 0 (leave it out for the API's default)"},
		{"--limit 1001 on domains", []string{"lookup", "domain", "example.com", "--limit", "1001"}, "--limit must be 1 to 1000, not 1001"},
		{"--limit 0 on exports", []string{"exports", "list", "proxies", "--limit", "0"}, "--limit must be 1 to 500, not 0"},
		{"--limit 501 on exports", []string{"exports", "list", "proxies", "--limit", "501"}, "--limit must be 1 to 500, not 501"},
		{"invalid IP", []string{"lookup", "ip", "999.1.1.1"}, `"999.1.1.1" is not an IP address`},
		{"hostname for IP", []string{"lookup", "ip", "example.com"}, "is not an IP address"},
		{"IP with zone", []string{"lookup", "ip", "fe80::1%eth0"}, "zone"},
		{"invalid feed list", []string{"exports", "list", "nope"}, `unknown feed "nope"`},
		{"invalid feed meta", []string{"exports", "meta", "nope", "latest"}, `unknown feed "nope"`},
		{"invalid feed download", []string{"exports", "download", "nope", "latest", "--out", out}, `unknown feed "nope"`},
		{"invalid feed stream", []string{"stream", "nope"}, `unknown feed "nope"`},
		{"invalid export id", []string{"exports", "meta", "proxies", "yesterday"}, `export id "yesterday"`},
		{"export id with bad date", []string{"exports", "meta", "proxies", "2026-13-01"}, `export id "2026-13-01"`},
		{"export id with bad hour", []string{"exports", "meta", "proxies", "2026-06-10/24"}, `export id "2026-06-10/24"`},
		{"download with bad id", []string{"exports", "download", "proxies", "2026-06-10/x", "--out", out}, `export id "2026-06-10/x"`},
		{"download with ID and --date", []string{"exports", "download", "proxies", "latest", "--date", "2026-06-09"}, "give the export as ID or as --date"},
		{"download --hour without --date", []string{"exports", "download", "proxies", "--hour", "3"}, "--hour 3 needs --date YYYY-MM-DD"},
		{"download --hour 24", []string{"exports", "download", "proxies", "--date", "2026-06-10", "--hour", "24"}, "--hour must be 0 to 23, not 24"},
		{"-o a file name", []string{"-o", "out.json", "account"}, `--output (-o) is the output format, text, json or csv, not "out.json": to write to a file, redirect stdout (> out.json)`},
		{"--format and --output disagree", []string{"-o", "json", "--format", "csv", "lookup", "ip", "1.1.1.1"}, "--output json and --format csv name two formats"},
		{"--concurrency 0", []string{"lookup", "ips", "--file", "-", "--concurrency", "0"}, "--concurrency must be 1 to 64, not 0"},
		{"--concurrency 65", []string{"lookup", "ips", "--file", "-", "--concurrency", "65"}, "--concurrency must be 1 to 64"},
		{"lookup ips without addresses", []string{"lookup", "ips"}, "lookup ips needs addresses: ADDR..., - (stdin) or --file FILE, or pipe them in"},
		{"--resend-unknown without --journal", []string{"lookup", "ips", "1.1.1.1", "--resend-unknown"}, "give --journal FILE"},
		{"--journal with --keep-duplicates", []string{"lookup", "ips", "1.1.1.1", "--journal", "j", "--keep-duplicates"}, "cannot be combined with --keep-duplicates"},
		{"--journal is --failed", []string{"lookup", "ip", "1.1.1.1", "8.8.8.8", "--journal", "j", "--failed", "./j"}, "--failed ./j and --journal j are the same file"},
		{"lookup ips with missing file", []string{"lookup", "ips", "--file", filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{"lookup ips with addresses and --file", []string{"lookup", "ips", "--file", "-", "1.1.1.1"}, "lookup ips takes addresses or --file, not both"},
		{"lookup ips with a line break in an argument", []string{"lookup", "ips", "1.1.1.1\n8.8.8.8"}, "holds a line break"},
		{"--max-retries 17", []string{"--max-retries", "17", "account"}, "--max-retries must be 0 to 16"},
		{"negative --max-events", []string{"stream", "proxies", "--max-events", "-1"}, "must not be negative"},
		{"negative --duration", []string{"stream", "proxies", "--duration", "-1s"}, "must not be negative"},
		{"--fake with --base-url", []string{"--fake", "health"}, "cannot be combined with --base-url"},
		{"completion for an unknown shell", []string{"completion", "tcsh"}, `unknown command "tcsh" for "synthient completion"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			c := clitest.Against(srv, tt.args...)
			c.TTYIn = true // a person at a terminal: stdin holds no addresses
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, tt.want, "stderr")
			assert.True(t, strings.HasPrefix(r.Stderr, "synthient: "), "stderr does not start with \"synthient: \":\n%s", r.Stderr)
			assert.Len(t, clitest.Lines(r.Stderr), 1, "stderr lines")
			assert.Empty(t, r.Stdout, "stdout")
			assert.Empty(t, srv.Requests()[before:], "requests sent for a usage error")
		})
	}
	_, err := os.Stat(out)
	assert.Error(t, err, "%s was created", out)
}

// An API error exits 3 with one stderr line: the status, the problem's
// detail or title, the request id and the Retry-After when set.
func TestExitCodeAPIError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		route  string
		fault  *synthienttest.Fault
		args   []string
		want   []string
		absent []string
	}{
		{
			name:   "403 on lookup ip",
			route:  synthienttest.RouteLookupIP,
			fault:  &synthienttest.Fault{Status: 403},
			args:   []string{"lookup", "ip", "1.1.1.1"},
			want:   []string{"403 Forbidden", "Injected fault."},
			absent: []string{"retry after"},
		},
		{
			name:  "404 on account",
			route: synthienttest.RouteAccount,
			fault: &synthienttest.Fault{Status: 404},
			args:  []string{"account"},
			want:  []string{"404 Not Found", "Injected fault."},
		},
		{
			name:   "429 without Retry-After",
			route:  synthienttest.RouteLookupIP,
			fault:  &synthienttest.Fault{Status: 429},
			args:   []string{"lookup", "ip", "8.8.8.8"},
			want:   []string{"429 Too Many Requests", "Injected fault.", "rate_limited_without_retry_after"},
			absent: []string{"retry after"},
		},
		{
			name:  "429 with a Retry-After past the maximum",
			route: synthienttest.RouteLookupDomain,
			fault: &synthienttest.Fault{Status: 429, RetryAfter: "120"},
			args:  []string{"lookup", "domain", "example.com"},
			want:  []string{"429 Too Many Requests", "retry after 2m0s", "retry_after_exceeds_max"},
		},
		{
			name:  "503 on a billed lookup",
			route: synthienttest.RouteLookupIP,
			fault: &synthienttest.Fault{Status: 503},
			args:  []string{"lookup", "ip", "8.8.8.8"},
			want:  []string{"503 Service Unavailable", "may_have_been_processed"},
		},
		{
			name:  "text/plain 500 body on account, no retries",
			route: synthienttest.RouteAccount,
			fault: &synthienttest.Fault{Status: 500, Body: "upstream exploded\n  badly"},
			args:  []string{"--max-retries", "0", "account"},
			want:  []string{"500 Internal Server Error", "upstream exploded badly"},
		},
		{
			name: "real 404 for an export that does not exist",
			args: []string{"exports", "meta", "proxies", "2020-01-01"},
			want: []string{"404 Not Found"},
		},
		{
			name:  "403 on a download",
			route: synthienttest.RouteStorage,
			fault: &synthienttest.Fault{Status: 403},
			args:  []string{"exports", "download", "proxies", "latest", "--out", "OUT"},
			want:  []string{"403 Forbidden"},
		},
		{
			name:  "403 on a stream with --reconnect stops",
			route: synthienttest.RouteStream,
			fault: &synthienttest.Fault{Status: 403},
			args:  []string{"stream", "proxies", "--reconnect", "--max-events", "3"},
			want:  []string{"403 Forbidden", "Injected fault."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			if tt.fault != nil {
				srv.Inject(tt.route, 1, *tt.fault)
			}
			args := slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))
			r := clitest.RunSrv(t, srv, args...)
			clitest.RequireCode(t, r, clierr.API, args...)
			ls := clitest.Lines(r.Stderr)
			require.Len(t, ls, 1, "stderr lines")
			line := ls[0]
			// The request id of the failed request.
			var id string
			for _, req := range srv.Requests() {
				if req.Status >= 400 {
					id = req.RequestID
				}
			}
			for _, w := range append([]string{"synthient: ", "request id " + id}, tt.want...) {
				assert.Contains(t, line, w, "stderr line")
			}
			for _, a := range tt.absent {
				assert.NotContains(t, line, a, "stderr line")
			}
			assert.Empty(t, r.Stdout, "stdout")
		})
	}
}

// A key the API does not know is a 401 (exit 3), and the key is never
// printed; nor is it with -v.
func TestExitCodeUnknownKey(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	keys := []struct{ name, key string }{
		{"unknown key", "00000000-0000-4000-8000-00000000beef"},
		{"not a UUID", "not-a-uuid-secret-key"},
	}
	for _, k := range keys {
		key := k.key
		for _, args := range [][]string{{"account"}, {"-v", "lookup", "ip", "1.1.1.1"}} {
			t.Run(k.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				r := clitest.Call{Args: append([]string{"--base-url", srv.URL}, args...), Env: map[string]string{"SYNTHIENT_API_KEY": key}}.Run(t)
				clitest.RequireCode(t, r, clierr.API, args...)
				assert.Equal(t, 1, strings.Count(r.Stderr, "401 Unauthorized"), "401 Unauthorized in stderr:\n%s", r.Stderr)
				// And passed as a flag.
				r = clitest.Call{Args: append([]string{"--base-url", srv.URL, "--api-key", key}, args...)}.Run(t)
				clitest.RequireCode(t, r, clierr.API, args...)
			})
		}
	}
}

// A connection error exits 4 with one line.
func TestExitCodeConnectionRefused(t *testing.T) {
	t.Parallel()
	base := closedURL(t)
	env := map[string]string{"SYNTHIENT_API_KEY": "11111111-2222-4333-8444-555555555555"}
	for _, args := range [][]string{
		{"lookup", "ip", "1.1.1.1"},
		{"--max-retries", "0", "account"},
		{"--max-retries", "0", "exports", "list", "proxies"},
		{"health"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := clitest.RunArgs(t, env, append([]string{"--base-url", base}, args...)...)
			clitest.RequireCode(t, r, clierr.Connection, args...)
			ls := clitest.Lines(r.Stderr)
			require.Len(t, ls, 1, "stderr lines")
			assert.Contains(t, ls[0], "connection failed", "stderr")
			assert.Regexp(t, `\(\d attempts?, [a-z_]+\)$`, ls[0], "how many attempts were made, and why no more")
		})
	}
}

// A response that does not come within --timeout exits 4: its headers are
// an hour away, so only --timeout ends the command.
func TestExitCodeTimeout(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: time.Hour})
	args := []string{"--timeout", "100ms", "--max-retries", "0", "lookup", "ip", "1.1.1.1"}
	r := clitest.RunSrv(t, srv, args...)
	clitest.RequireCode(t, r, clierr.Connection, args...)
	if ls := clitest.Lines(r.Stderr); assert.Len(t, ls, 1, "stderr lines") {
		assert.Contains(t, ls[0], "timed out", "stderr")
	}

	// A connection closed after the request is a connection error too.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	r = clitest.RunSrv(t, srv, "lookup", "ip", "1.1.1.1")
	clitest.RequireCode(t, r, clierr.Connection)
}

// Cancelling the context (Ctrl-C) exits 130.
func TestExitCodeInterrupt(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clitest.Against(srv, "stream", "proxies")
	c.Ctx, c.Stdout = ctx, &clitest.SyncBuffer{}
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	require.Eventually(t, func() bool { return strings.Count(c.Stdout.String(), "\n") >= 2 }, 2*time.Minute, 10*time.Millisecond, "two stream events")
	cancel()
	select {
	case r := <-done:
		clitest.RequireCode(t, r, clierr.Interrupt)
		assert.Equal(t, "synthient: interrupted\n", r.Stderr, "stderr")
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "stream did not stop within 2 minutes of the cancellation")
	}
}

// An error is one line with one "synthient: " prefix: the SDK's errors
// already start with "synthient: ", and the command must not add a
// second.
func TestErrorLineHasOnePrefix(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	out := filepath.Join(t.TempDir(), "f.parquet")
	require.NoError(t, os.WriteFile(out, nil, 0o600))
	tests := []struct {
		name string
		c    clitest.Call
	}{
		{"connection refused", clitest.Call{Args: []string{"--base-url", closedURL(t), "lookup", "ip", "1.1.1.1"}, Env: clitest.KeyEnv(srv)}},
		{"bad export id", clitest.Against(srv, "exports", "meta", "proxies", "2026-13-01")},
		{"download onto a file", clitest.Against(srv, "exports", "download", "proxies", "latest", "--out", out)},
		{"IP with zone", clitest.Against(srv, "lookup", "ip", "fe80::1%eth0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.c.Run(t)
			require.NotEqual(t, 0, r.Code, "synthient %s succeeded", strings.Join(tt.c.Args, " "))
			assert.NotContains(t, r.Stderr, "synthient: synthient:", "doubled prefix")
		})
	}
}
