package main

// Tests of root.go: the global flags and the environment, --fake, exit
// codes, and what run does to every command's output (one error line,
// escapes and redaction, write errors).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// closedURL returns a base URL on a loopback port nothing listens on.
func closedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
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
func TestExitCodeUsage(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
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
		{"lookup ip without address", []string{"lookup", "ip"}, "accepts 1 arg(s), received 0"},
		{"lookup ip with two addresses", []string{"lookup", "ip", "1.1.1.1", "8.8.8.8"}, "accepts 1 arg(s), received 2"},
		{"lookup domain without name", []string{"lookup", "domain"}, "accepts 1 arg(s)"},
		{"account with an argument", []string{"account", "extra"}, "unknown command"},
		{"exports meta without id", []string{"exports", "meta", "proxies"}, "accepts 2 arg(s), received 1"},
		{"exports list without feed", []string{"exports", "list"}, "accepts 1 arg(s)"},
		{"stream without feed", []string{"stream"}, "accepts 1 arg(s)"},
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
		{"download without --out", []string{"exports", "download", "proxies", "latest"}, "--out"},
		{"--concurrency 0", []string{"lookup", "ips", "--file", "-", "--concurrency", "0"}, "--concurrency must be 1 to 64, not 0"},
		{"--concurrency 65", []string{"lookup", "ips", "--file", "-", "--concurrency", "65"}, "--concurrency must be 1 to 64"},
		{"lookup ips without --file", []string{"lookup", "ips"}, "--file"},
		{"lookup ips with missing file", []string{"lookup", "ips", "--file", filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{"lookup ips with addresses and --file", []string{"lookup", "ips", "--file", "-", "1.1.1.1"}, "lookup ips takes addresses or --file, not both"},
		{"lookup ips with a line break in an argument", []string{"lookup", "ips", "1.1.1.1\n8.8.8.8"}, "holds a line break"},
		{"--max-retries 17", []string{"--max-retries", "17", "account"}, "--max-retries must be 0 to 16"},
		{"negative --max-events", []string{"stream", "proxies", "--max-events", "-1"}, "must not be negative"},
		{"negative --duration", []string{"stream", "proxies", "--duration", "-1s"}, "must not be negative"},
		{"--fake with --base-url", []string{"--fake", "health"}, "cannot be combined with --base-url"},
		{"completion for an unknown shell", []string{"completion", "tcsh"}, `unknown command "tcsh" for "synthient completion"`},
	}
	// Not parallel: each case counts the requests the shared fake saw.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			r := runSrv(t, srv, tt.args...)
			requireCode(t, r, exitUsage, tt.args...)
			assert.Contains(t, r.stderr, tt.want, "stderr")
			assert.True(t, strings.HasPrefix(r.stderr, "synthient: "), "stderr does not start with \"synthient: \":\n%s", r.stderr)
			assert.Len(t, lines(r.stderr), 1, "stderr lines")
			assert.Empty(t, r.stdout, "stdout")
			assert.Empty(t, srv.Requests()[before:], "requests sent for a usage error")
		})
	}
	_, err := os.Stat(out)
	assert.Error(t, err, "%s was created", out)
}

// --fake with an explicit --api-key is a usage error, not a key silently
// ignored.
func TestFakeWithAPIKey(t *testing.T) {
	t.Parallel()
	r := call{args: []string{"account", "--fake", "--api-key", "sk-conflicting"}}.run(t)
	requireCode(t, r, exitUsage)
	assert.Contains(t, r.stderr, "cannot be combined with --api-key", "stderr")
	assert.Empty(t, r.stdout, "stdout")
}

// Without a key, every command that needs one exits 2 naming
// SYNTHIENT_API_KEY, and sends nothing.
func TestNoAPIKey(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	envs := []struct {
		name string
		env  map[string]string
	}{
		{"no environment", nil},
		{"SYNTHIENT_BASE_URL only", map[string]string{"SYNTHIENT_BASE_URL": srv.URL}},
		{"SYNTHIENT_API_KEY empty", map[string]string{"SYNTHIENT_API_KEY": ""}},
	}
	for _, args := range [][]string{
		{"account"},
		{"lookup", "ip", "1.1.1.1"},
		{"lookup", "domain", "example.com"},
		{"lookup", "ips", "--file", "-"},
		{"exports", "list", "proxies"},
		{"exports", "meta", "proxies", "latest"},
		{"stream", "proxies", "--max-events", "1"},
	} {
		for _, e := range envs {
			t.Run(strings.Join(args, " ")+"/"+e.name, func(t *testing.T) {
				r := call{args: args, env: e.env, stdin: strings.NewReader("1.1.1.1\n")}.run(t)
				requireCode(t, r, exitUsage, args...)
				assert.Contains(t, r.stderr, "SYNTHIENT_API_KEY", "stderr")
			})
		}
	}
	assert.Empty(t, srv.Requests(), "requests sent without a key")
}

// SYNTHIENT_BASE_URL and SYNTHIENT_API_KEY are read through getenv; the
// flags win over them.
func TestEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	env := map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": srv.URL}
	r := runArgs(t, env, "account")
	requireCode(t, r, 0)
	assert.Contains(t, r.stdout, "Grace Hopper", "account through the environment")

	// --api-key over a wrong SYNTHIENT_API_KEY.
	env["SYNTHIENT_API_KEY"] = unknownKey
	r = runArgs(t, env, "--api-key", srv.APIKey, "account")
	requireCode(t, r, 0)

	// --base-url over a SYNTHIENT_BASE_URL that leads nowhere.
	env = map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": closedURL(t)}
	r = runArgs(t, env, "--base-url", srv.URL, "health")
	requireCode(t, r, 0)
	assert.Equal(t, "ok\n", r.stdout, "health")

	// health needs no key.
	r = runArgs(t, nil, "--base-url", srv.URL, "health")
	requireCode(t, r, 0)
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
			srv := newServer(t)
			if tt.fault != nil {
				srv.Inject(tt.route, 1, *tt.fault)
			}
			args := slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))
			r := runSrv(t, srv, args...)
			requireCode(t, r, exitAPI, args...)
			ls := lines(r.stderr)
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
			assert.Empty(t, r.stdout, "stdout")
		})
	}
}

// A key the API does not know is a 401 (exit 3), and the key is never
// printed; nor is it with -v.
func TestExitCodeUnknownKey(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	keys := []struct{ name, key string }{
		{"unknown key", "00000000-0000-4000-8000-00000000beef"},
		{"not a UUID", "not-a-uuid-secret-key"},
	}
	for _, k := range keys {
		key := k.key
		for _, args := range [][]string{{"account"}, {"-v", "lookup", "ip", "1.1.1.1"}} {
			t.Run(k.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				r := call{args: append([]string{"--base-url", srv.URL}, args...), env: map[string]string{"SYNTHIENT_API_KEY": key}}.run(t)
				requireCode(t, r, exitAPI, args...)
				assert.Equal(t, 1, strings.Count(r.stderr, "401 Unauthorized"), "401 Unauthorized in stderr:\n%s", r.stderr)
				// And passed as a flag.
				r = call{args: append([]string{"--base-url", srv.URL, "--api-key", key}, args...)}.run(t)
				requireCode(t, r, exitAPI, args...)
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
			r := runArgs(t, env, append([]string{"--base-url", base}, args...)...)
			requireCode(t, r, exitConnection, args...)
			ls := lines(r.stderr)
			require.Len(t, ls, 1, "stderr lines")
			assert.Contains(t, ls[0], "connection failed", "stderr")
		})
	}
}

// A response that does not come within --timeout exits 4, promptly.
func TestExitCodeTimeout(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 20 * time.Second})
	args := []string{"--timeout", "100ms", "--max-retries", "0", "lookup", "ip", "1.1.1.1"}
	r := runSrv(t, srv, args...)
	requireCode(t, r, exitConnection, args...)
	if ls := lines(r.stderr); assert.Len(t, ls, 1, "stderr lines") {
		assert.Contains(t, ls[0], "timed out", "stderr")
	}
	assert.LessOrEqual(t, r.elapsed, 5*time.Second, "took too long with --timeout 100ms")

	// A connection closed after the request is a connection error too.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	r = runSrv(t, srv, "lookup", "ip", "1.1.1.1")
	requireCode(t, r, exitConnection)
}

// Cancelling the context (Ctrl-C) exits 130.
func TestExitCodeInterrupt(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := against(srv, "stream", "proxies")
	c.ctx, c.stdout = ctx, &syncBuffer{}
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	require.Eventually(t, func() bool { return strings.Count(c.stdout.String(), "\n") >= 2 }, 10*time.Second, 10*time.Millisecond, "two stream events")
	cancel()
	select {
	case r := <-done:
		requireCode(t, r, exitInterrupt)
		assert.Equal(t, "synthient: interrupted\n", r.stderr, "stderr")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "stream did not stop within 10s of the cancellation")
	}
}

// An error is one line with one "synthient: " prefix: the SDK's errors
// already start with "synthient: ", and the command must not add a
// second.
func TestErrorLineHasOnePrefix(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	out := filepath.Join(t.TempDir(), "f.parquet")
	require.NoError(t, os.WriteFile(out, nil, 0o644))
	tests := []struct {
		name string
		c    call
	}{
		{"connection refused", call{args: []string{"--base-url", closedURL(t), "lookup", "ip", "1.1.1.1"}, env: keyEnv(srv)}},
		{"bad export id", against(srv, "exports", "meta", "proxies", "2026-13-01")},
		{"download onto a file", against(srv, "exports", "download", "proxies", "latest", "--out", out)},
		{"IP with zone", against(srv, "lookup", "ip", "fe80::1%eth0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.c.run(t)
			require.NotEqual(t, 0, r.code, "synthient %s succeeded", strings.Join(tt.c.args, " "))
			assert.NotContains(t, r.stderr, "synthient: synthient:", "doubled prefix")
		})
	}
}

// --fake runs every command against an in-process fake, with no key.
func TestFakeEveryCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addrs.txt")
	require.NoError(t, os.WriteFile(addrFile, []byte("# test\n1.1.1.1\n8.8.8.8\n\n2606:4700:4700::1111\n"), 0o644))
	out := filepath.Join(dir, "export.parquet")
	tests := []struct {
		args  []string
		stdin string
		check func(t *testing.T, r result)
	}{
		{args: []string{"lookup", "ip", "1.1.1.1"}, check: contains("IP", "1.1.1.1", "Network", "AS13335")},
		{args: []string{"lookup", "ip", "203.0.113.7", "-o", "json"}, check: contains(`"ip":"203.0.113.7"`, `"risk_score"`)},
		{args: []string{"lookup", "ips", "--file", addrFile}, check: func(t *testing.T, r result) {
			ls := lines(r.stdout)
			require.Len(t, ls, 4, "table:\n%s", r.stdout)
			for i, prefix := range []string{"IP ", "1.1.1.1 ", "8.8.8.8 ", "2606:4700:4700::1111 "} {
				assert.True(t, strings.HasPrefix(ls[i], prefix), "line %d does not start with %q:\n%s", i+1, prefix, r.stdout)
			}
		}},
		{args: []string{"lookup", "ips", "--file", "-", "--concurrency", "2", "-o", "json"}, stdin: "9.9.9.9\n1.0.0.1\n", check: func(t *testing.T, r result) {
			assert.Equal(t, []string{"9.9.9.9", "1.0.0.1"}, ndjsonIPs(t, r.stdout), "results")
		}},
		{args: []string{"lookup", "domain", "example.com", "--limit", "3"}, check: func(t *testing.T, r result) {
			assert.Contains(t, r.stdout, "Domain          example.com", "domain")
			assert.Equal(t, 3, strings.Count(r.stdout, ".example.com  "), "recent events:\n%s", r.stdout)
		}},
		{args: []string{"account"}, check: contains("Name", "Grace Hopper", "Credits", "50000", "Scopes", "BASIC")},
		{args: []string{"health"}, check: func(t *testing.T, r result) {
			assert.Equal(t, "ok\n", r.stdout, "health")
		}},
		{args: []string{"exports", "list", "proxies"}, check: contains("ID", "KIND", "SIZE", "hourly", "daily")},
		{args: []string{"exports", "list", "torrents", "--limit", "2"}, check: func(t *testing.T, r result) {
			ls := lines(r.stdout)
			require.Len(t, ls, 5, "a page of 2:\n%s", r.stdout)
			// A cursor would mean nothing to the next run's new fake.
			assert.Equal(t, "more: --all (with --fake each run starts a new fake API, which a --cursor from this one does not reach)", ls[4], "a page of 2:\n%s", r.stdout)
		}},
		{args: []string{"exports", "list", "ja4t", "--limit", "2", "--all"}, check: func(t *testing.T, r result) {
			assert.GreaterOrEqual(t, len(lines(r.stdout)), 4, "--all:\n%s", r.stdout)
			assert.NotContains(t, r.stdout, "more:", "--all")
		}},
		{args: []string{"exports", "meta", "proxies", "latest"}, check: contains("Stream", "proxies", "SHA-256", "Columns")},
		{args: []string{"exports", "download", "proxies", "latest", "--out", out}, check: downloaded(out, "")},
		{args: []string{"exports", "download", "proxies", "latest", "--out", out, "--verify", "--force"}, check: downloaded(out, "SHA-256 verified")},
		{args: []string{"stream", "proxies", "--max-events", "3"}, check: events(3, 3)},
		{args: []string{"stream", "helio/http", "--duration", "300ms"}, check: events(1, 100)},
		{args: []string{"stream", "anonymizers", "--reconnect", "--max-events", "3"}, check: events(3, 3)},
	}
	// Not parallel: the second download replaces the first one's file.
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(strings.Join(tt.args, " "), dir, "DIR"), func(t *testing.T) {
			args := append([]string{"--fake"}, tt.args...)
			r := call{args: args, stdin: strings.NewReader(tt.stdin)}.run(t)
			requireCode(t, r, 0, args...)
			for _, l := range lines(r.stderr) { // only lookup ips's summary
				assert.Regexp(t, summaryRe, l, "stderr")
			}
			tt.check(t, r)
		})
	}
}

// contains checks that stdout holds each of want.
func contains(want ...string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		for _, w := range want {
			assert.Contains(t, r.stdout, w, "stdout")
		}
	}
}

// downloaded checks a download's report (with note) and that path holds a
// Parquet export and no temporary file was left beside it.
func downloaded(path, note string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		assert.True(t, strings.HasPrefix(r.stdout, "wrote "+path+": proxies "), "stdout: %q", r.stdout)
		assert.Contains(t, r.stdout, note, "stdout")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, len(b) >= 8 && string(b[:4]) == "PAR1" && string(b[len(b)-4:]) == "PAR1", "%s is not a Parquet export (%d bytes)", path, len(b))
		parts, _ := filepath.Glob(path + "*.part")
		assert.Empty(t, parts, "temporary files were left")
	}
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
				requireCode(t, r, tt.code, args...)
				checkTerminalSafe(t, "stdout", r.stdout)
				checkTerminalSafe(t, "stderr", r.stderr)
				if output == "json" {
					checkJSONLines(t, r.stdout)
				}
				assertNoForgedLine(t, "stdout", r.stdout)
				checkHostileVisible(t, r, output == "json", tt.stderr)
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
		assert.Contains(t, r.stderr, `\x1b]0;pwned\x07`, "stderr does not show the hostile text escaped")
		assert.Contains(t, r.stderr, `\u009b2J`, "stderr does not show the hostile text escaped")
		assertNoForgedLine(t, "stderr", r.stderr)
		return
	}
	want := `\x1b]0;pwned\x07`
	if asJSON {
		want = `\u001b]0;pwned\u0007`
	}
	assert.Contains(t, r.stdout, want, "stdout does not show the hostile text escaped")
}

// assertNoForgedLine checks that no line of out is one a server string
// forged ("synthient: forged line").
func assertNoForgedLine(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range lines(out) {
		assert.False(t, strings.HasPrefix(l, "synthient: forged"), "a server string forged a line of its own on %s:\n%s", what, out)
	}
}

// A problem detail that echoes the key is redacted before it is cut to
// 300 bytes, so a key that straddles the cut prints no part of itself,
// and a key echoed in upper case is redacted too: in the error that ends
// the command and in the report of a failed batch.
func TestErrorDetailEchoesKey(t *testing.T) {
	t.Parallel()
	const key = configuredKey
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
			require.NotEqual(t, exitOK, r.code, "exit 0; stderr:\n%s", r.stderr)
			assert.NotContains(t, strings.ToLower(r.stdout), key[:8], "stdout shows part of the key")
			assert.NotContains(t, strings.ToLower(r.stderr), key[:8], "stderr shows part of the key")
			assert.Contains(t, r.stderr, "Invalid API key: ", "stderr does not show the redacted detail")
			assert.Contains(t, r.stderr, "[redac", "stderr does not show the redacted detail")
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
			requireCode(t, r, exitOK, args...)
			assertNoForgedLine(t, "stderr", r.stderr)
			text := r.stderr
			if !slices.Contains(tt.args, "-") { // else stdout is the export
				assertNoForgedLine(t, "stdout", r.stdout)
				text = r.stdout
			}
			assert.Contains(t, text, tt.want, "the output")
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
			c := call{args: tt.args, stdoutTo: failWriter{errNoSpace}}
			if tt.interrupted {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				c.ctx = ctx
			}
			r := c.run(t)
			requireCode(t, r, exitFailure, tt.args...)
			ls := lines(r.stderr)
			require.Len(t, ls, 1, "stderr lines: want one with the write error")
			assert.Contains(t, ls[0], errNoSpace.Error(), "stderr")
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
		{"a missing input file", fmt.Errorf("--file: %w", &fs.PathError{Op: "open", Path: "in.txt", Err: fs.ErrNotExist}), exitUsage},
		{"a file that appeared during the download",
			&synthient.Error{Op: "DownloadExportFile", Attempts: 3, Message: "out.parquet appeared during the download", Err: fs.ErrExist}, exitFailure},
		{"a TLS failure whose text says received",
			&synthient.ConnectionError{Err: errors.New("tls: received unexpected handshake message")}, exitConnection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, exitCode(tt.err), "exitCode(%v)", tt.err)
		})
	}
}

// Shell completion offers the --output formats.
func TestOutputFlagCompletion(t *testing.T) {
	t.Parallel()
	r := call{args: []string{"__complete", "account", "--output", ""}}.run(t)
	requireCode(t, r, 0, "__complete")
	assert.Equal(t, "text\njson\ncsv\n:4\n", r.stdout)
}

// A global flag that a command would ignore is refused (exit 2), not
// accepted silently: fake-server --api-key K does not serve K.
func TestUnusedGlobalFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fake-server", "--api-key", "mykey"}, "--api-key does not apply to fake-server"},
		{[]string{"--base-url", "https://example.com/api/v4", "demo"}, "--base-url does not apply to demo"},
		{[]string{"--fake", "demo"}, "--fake does not apply to demo"},
		{[]string{"-o", "json", "demo"}, "demo prints a narrated tour as text: --output json does not apply to it"},
		{[]string{"completion", "bash", "-v"}, "--verbose does not apply to completion"},
		{[]string{"version", "--timeout", "1s"}, "--timeout does not apply to version"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := call{args: tt.args}.run(t)
			requireCode(t, r, exitUsage, tt.args...)
			assert.Equal(t, "synthient: "+tt.want+"\n", r.stderr)
			assert.Empty(t, r.stdout)
		})
	}
}

// -v and --trace, asked for explicitly, print under --quiet too.
func TestQuietKeepsWhatIsAskedFor(t *testing.T) {
	t.Parallel()
	for flag, want := range map[string]string{"-v": "attempt 1/3 GET /account/me: 200", "--trace": "trace Account (standard): ok"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			r := call{args: []string{"-q", flag, "--fake", "account"}}.run(t)
			requireCode(t, r, exitOK)
			assert.Contains(t, r.stderr, want)
		})
	}
}

// A command's help lists none of the global flags it refuses, and the
// others still; the flags stay in the help of the other commands.
func TestHelpHidesUnusedFlags(t *testing.T) {
	t.Parallel()
	for cmd, refused := range unusedFlags {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			r := call{args: []string{cmd, "--help"}}.run(t)
			requireCode(t, r, exitOK, cmd)
			for _, name := range refused {
				assert.NotRegexp(t, `(?m)^\s+(-\w, )?--`+name+` `, r.stdout, "%s --help lists --%s", cmd, name)
			}
			assert.Contains(t, r.stdout, "--no-progress", "the flags it takes")
		})
	}
	r := call{args: []string{"account", "--help"}}.run(t)
	requireCode(t, r, exitOK)
	for _, name := range []string{"--api-key ", "--base-url ", "--fake ", "--timeout ", "--jq "} {
		assert.Contains(t, r.stdout, name, "account --help")
	}
}

// Errors speak in the command line's terms: no SDK method name or "invalid
// argument", and the value or flag that fixes them.
func TestErrorsInCLITerms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "p.parquet")
	require.NoError(t, os.WriteFile(existing, []byte("old"), 0o600))
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"domain", []string{"--fake", "lookup", "domain", "a/b"}, `synthient: domain holds '/' (see 'synthient --help')`},
		{"file exists", []string{"--fake", "exports", "download", "proxies", "latest", "--out", existing},
			"synthient: " + existing + ": file already exists (--force replaces it)"},
		{"base URL", []string{"--api-key", "k", "--base-url", "ht!tp://x", "account"},
			`synthient: base URL does not parse: "ht!tp://x" (--base-url or SYNTHIENT_BASE_URL: an absolute http(s) URL ending in /api/v4, such as https://api.synthient.com/api/v4)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := call{args: tt.args}.run(t)
			requireCode(t, r, exitUsage, tt.args...)
			assert.Contains(t, r.stderr, tt.want)
			assert.NotRegexp(t, `invalid argument|Lookup|Download|NewClient`, r.stderr)
		})
	}
}

// A 404 from a base URL that does not end in /api/v4 says so.
func TestNotFoundBaseURLHint(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	base := strings.TrimSuffix(srv.URL, "/api/v4")
	r := call{args: []string{"--api-key", srv.APIKey, "--base-url", base, "account"}}.run(t)
	requireCode(t, r, exitAPI, "account")
	assert.Contains(t, r.stderr, "404 Not Found")
	assert.Contains(t, r.stderr, `the base URL "`+base+`" does not end in /api/v4`)

	missing := runSrv(t, srv, "exports", "meta", "proxies", "2020-01-01")
	requireCode(t, missing, exitAPI, "exports meta")
	assert.Contains(t, missing.stderr, "404 Not Found")
	assert.NotContains(t, missing.stderr, "base URL", "a 404 of the right base URL has no hint")
}

// docs/cli.md and --help agree: every global flag is in its table of
// global flags, every command in its table of commands, with each of the
// command's own flags in its row.
func TestDocsAgreeWithHelp(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	text := string(doc)
	var globals strings.Builder // the first cells of the table of global flags
	for _, line := range strings.Split(text[strings.Index(text, "## Global flags"):strings.Index(text, "## Commands")], "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			cell, _, _ := strings.Cut(rest, "|")
			globals.WriteString("`" + cell + "\n")
		}
	}
	rows := map[string]string{} // command path -> its row in the table of commands
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `synthient "); ok {
			cell, _, _ := strings.Cut(strings.ReplaceAll(rest, `\|`, "/"), "|") // an escaped | is inside the cell
			words := strings.Fields(strings.NewReplacer("`", " ", "[", " ", "{", " ").Replace(cell))
			path := []string{"synthient"}
			for _, w := range words {
				if w == "" || !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
					break
				}
				path = append(path, w)
			}
			rows[strings.Join(path, " ")] = cell
		}
	}
	a := &app{env: &env{}, secrets: &redactor{}}
	root := a.rootCommand()
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		assert.Contains(t, globals.String(), "`--"+f.Name+"`", "global flag --%s is not in docs/cli.md's table of global flags", f.Name)
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.HasSubCommands() || c.Hidden || c.Name() == "help" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		row, ok := rows[c.CommandPath()]
		if !assert.True(t, ok, "%s is not in docs/cli.md's table of commands", c.CommandPath()) {
			return
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				assert.Contains(t, row, "--"+f.Name, "%s --%s is not in its row of docs/cli.md", c.CommandPath(), f.Name)
			}
		})
	}
	walk(root)
}
