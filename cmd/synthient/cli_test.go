package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/synthient-go/synthient/synthienttest"
)

// Usage errors and invalid arguments exit 2, with a message, and send
// nothing to the API.
func TestExitCodeUsage(t *testing.T) {
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
		{"bad --output", []string{"--output", "yaml", "account"}, `--output must be text or json, not "yaml"`},
		{"bad -o", []string{"-o", "xml", "lookup", "ip", "1.1.1.1"}, "--output must be text or json"},
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
		{"lookup ips with an argument", []string{"lookup", "ips", "1.1.1.1"}, "unknown command"},
		{"--max-retries 17", []string{"--max-retries", "17", "account"}, "--max-retries must be 0 to 16"},
		{"negative --max-events", []string{"stream", "proxies", "--max-events", "-1"}, "must not be negative"},
		{"negative --duration", []string{"stream", "proxies", "--duration", "-1s"}, "must not be negative"},
		{"--fake with --base-url", []string{"--fake", "health"}, "cannot be combined with --base-url"},
		{"demo with --output json", []string{"-o", "json", "demo"}, "--output json does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			r := runSrv(t, srv, tt.args...)
			wantCode(t, r, exitUsage, tt.args...)
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr does not hold %q:\n%s", tt.want, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "synthient: ") {
				t.Errorf("stderr does not start with \"synthient: \":\n%s", r.stderr)
			}
			if n := len(lines(r.stderr)); n != 1 {
				t.Errorf("stderr has %d lines, want one:\n%s", n, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout: %q, want nothing", r.stdout)
			}
			if got := srv.Requests(); len(got) != before {
				t.Errorf("a usage error sent %d request(s), first %s %s", len(got)-before, got[before].Method, got[before].Path)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// --fake with an explicit --api-key is a usage error, not a key silently
// ignored.
func TestFakeWithAPIKey(t *testing.T) {
	r := call{args: []string{"account", "--fake", "--api-key", "sk-conflicting"}}.run(t)
	wantCode(t, r, exitUsage)
	if !strings.Contains(r.stderr, "cannot be combined with --api-key") || r.stdout != "" {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// Without a key, every command that needs one exits 2 naming
// SYNTHIENT_API_KEY, and sends nothing.
func TestNoAPIKey(t *testing.T) {
	srv := newServer(t)
	for _, args := range [][]string{
		{"account"},
		{"lookup", "ip", "1.1.1.1"},
		{"lookup", "domain", "example.com"},
		{"lookup", "ips", "--file", "-"},
		{"exports", "list", "proxies"},
		{"exports", "meta", "proxies", "latest"},
		{"stream", "proxies", "--max-events", "1"},
	} {
		for _, env := range []map[string]string{nil, {"SYNTHIENT_BASE_URL": srv.URL}, {"SYNTHIENT_API_KEY": ""}} {
			r := call{args: args, env: env, stdin: strings.NewReader("1.1.1.1\n")}.run(t)
			wantCode(t, r, exitUsage, args...)
			if !strings.Contains(r.stderr, "SYNTHIENT_API_KEY") {
				t.Errorf("synthient %s: stderr does not name SYNTHIENT_API_KEY:\n%s", strings.Join(args, " "), r.stderr)
			}
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key", n)
	}
}

// SYNTHIENT_BASE_URL and SYNTHIENT_API_KEY are read through getenv; the
// flags win over them.
func TestEnvironmentAndFlags(t *testing.T) {
	srv := newServer(t)
	env := map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": srv.URL}
	r := runArgs(t, env, "account")
	wantCode(t, r, 0)
	if !strings.Contains(r.stdout, "Grace Hopper") {
		t.Errorf("account through the environment:\n%s", r.stdout)
	}

	// --api-key over a wrong SYNTHIENT_API_KEY.
	env["SYNTHIENT_API_KEY"] = "00000000-0000-4000-8000-000000000000"
	r = runArgs(t, env, "--api-key", srv.APIKey, "account")
	wantCode(t, r, 0)

	// --base-url over a SYNTHIENT_BASE_URL that leads nowhere.
	env = map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": closedURL(t)}
	r = runArgs(t, env, "--base-url", srv.URL, "health")
	wantCode(t, r, 0)
	if r.stdout != "ok\n" {
		t.Errorf("health: %q", r.stdout)
	}

	// health needs no key.
	r = runArgs(t, nil, "--base-url", srv.URL, "health")
	wantCode(t, r, 0)
}

// An API error exits 3 with one stderr line: the status, the problem's
// detail or title, the request id and the Retry-After when set.
func TestExitCodeAPIError(t *testing.T) {
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
			srv := newServer(t)
			if tt.fault != nil {
				srv.Inject(tt.route, 1, *tt.fault)
			}
			args := slicesReplace(tt.args, "OUT", filepath.Join(t.TempDir(), "f.parquet"))
			r := runSrv(t, srv, args...)
			wantCode(t, r, exitAPI, args...)
			ls := lines(r.stderr)
			if len(ls) != 1 {
				t.Fatalf("stderr has %d lines, want 1:\n%s", len(ls), r.stderr)
			}
			line := ls[0]
			// The request id of the failed request.
			var id string
			for _, req := range srv.Requests() {
				if req.Status >= 400 {
					id = req.RequestID
				}
			}
			want := append([]string{"synthient: ", "request id " + id}, tt.want...)
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr line does not hold %q:\n%s", w, line)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(line, a) {
					t.Errorf("stderr line holds %q:\n%s", a, line)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout: %q", r.stdout)
			}
		})
	}
}

// A key the API does not know is a 401 (exit 3), and the key is never
// printed; nor is it with -v.
func TestExitCodeUnknownKey(t *testing.T) {
	srv := newServer(t)
	for _, key := range []string{"00000000-0000-4000-8000-00000000beef", "not-a-uuid-secret-key"} {
		for _, args := range [][]string{{"account"}, {"-v", "lookup", "ip", "1.1.1.1"}} {
			r := call{args: append([]string{"--base-url", srv.URL}, args...), env: map[string]string{"SYNTHIENT_API_KEY": key}}.run(t)
			wantCode(t, r, exitAPI, args...)
			if !strings.Contains(r.stderr, "401 Unauthorized") || strings.Count(r.stderr, "401 Unauthorized") != 1 {
				t.Errorf("stderr: %s", r.stderr)
			}
			// And passed as a flag.
			r = call{args: append([]string{"--base-url", srv.URL, "--api-key", key}, args...)}.run(t)
			wantCode(t, r, exitAPI, args...)
		}
	}
}

// An --out that cannot be created exits 2 before anything is sent; bytes
// that are not the export (here, fewer than the meta's size, caught
// before --verify) exit 3; neither leaves a file.
func TestDownloadFailuresExitCodes(t *testing.T) {
	srv := newServer(t)
	dir := t.TempDir()
	for _, out := range []string{filepath.Join(dir, "missing", "f.parquet"), dir} {
		r := runSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--force")
		wantCode(t, r, exitUsage)
		if n := len(lines(r.stderr)); n != 1 || !strings.Contains(r.stderr, out) {
			t.Errorf("--out %s: stderr %q", out, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for unusable --out paths", n)
	}

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 200, Body: "not the export", ContentType: "application/octet-stream"})
	out := filepath.Join(dir, "f.parquet")
	r := runSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--verify")
	wantCode(t, r, exitAPI)
	if !strings.Contains(r.stderr, "size mismatch") {
		t.Errorf("stderr %q", r.stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("%s holds %d entries after failed downloads, first %s", dir, len(entries), entries[0].Name())
	}
}

// An unhealthy API: health exits 3 and says why.
func TestHealthUnhealthy(t *testing.T) {
	srv := newServer(t)
	srv.SetUnhealthy("database unreachable")
	r := runSrv(t, srv, "health")
	wantCode(t, r, exitAPI)
	if !strings.Contains(r.stderr, "503") || !strings.Contains(r.stderr, "database unreachable") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// closedURL returns a base URL on a loopback port nothing listens on.
func closedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/api/v4"
}

// A connection error exits 4 with one line.
func TestExitCodeConnectionRefused(t *testing.T) {
	base := closedURL(t)
	env := map[string]string{"SYNTHIENT_API_KEY": "11111111-2222-4333-8444-555555555555"}
	for _, args := range [][]string{
		{"lookup", "ip", "1.1.1.1"},
		{"--max-retries", "0", "account"},
		{"--max-retries", "0", "exports", "list", "proxies"},
		{"health"},
	} {
		r := runArgs(t, env, append([]string{"--base-url", base}, args...)...)
		wantCode(t, r, exitConnection, args...)
		if ls := lines(r.stderr); len(ls) != 1 || !strings.Contains(ls[0], "connection failed") {
			t.Errorf("synthient %s: stderr:\n%s", strings.Join(args, " "), r.stderr)
		}
	}
}

// A response that does not come within --timeout exits 4, promptly.
func TestExitCodeTimeout(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 20 * time.Second})
	args := []string{"--timeout", "100ms", "--max-retries", "0", "lookup", "ip", "1.1.1.1"}
	r := runSrv(t, srv, args...)
	wantCode(t, r, exitConnection, args...)
	if ls := lines(r.stderr); len(ls) != 1 || !strings.Contains(ls[0], "timed out") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if r.elapsed > 5*time.Second {
		t.Errorf("took %s with --timeout 100ms", r.elapsed)
	}

	// A connection closed after the request is a connection error too.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	r = runSrv(t, srv, "lookup", "ip", "1.1.1.1")
	wantCode(t, r, exitConnection)
}

// Cancelling the context (Ctrl-C) exits 130.
func TestExitCodeInterrupt(t *testing.T) {
	srv := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := against(srv, "stream", "proxies")
	c.ctx, c.stdout = ctx, &syncBuffer{}
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	waitFor(t, func() bool { return strings.Count(c.stdout.String(), "\n") >= 2 }, "two stream events")
	cancel()
	select {
	case r := <-done:
		wantCode(t, r, exitInterrupt)
		if r.stderr != "synthient: interrupted\n" {
			t.Errorf("stderr: %q", r.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream did not stop within 10s of the cancellation")
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exports download onto an existing file without --force exits 2, leaves
// the file alone and sends nothing; with --force it overwrites it.
func TestDownloadExistingFile(t *testing.T) {
	srv := newServer(t)
	out := filepath.Join(t.TempDir(), "proxies.parquet")
	if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--verify")
	wantCode(t, r, exitUsage)
	if ls := lines(r.stderr); len(ls) == 0 || !strings.Contains(ls[0], out) || !strings.Contains(ls[0], "exists") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Errorf("the file was changed to %d bytes", len(b))
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	if parts, _ := filepath.Glob(out + "*.part"); len(parts) != 0 {
		t.Errorf("temporary files were left: %v", parts)
	}

	r = runSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--verify", "--force")
	wantCode(t, r, 0)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("PAR1")) || !bytes.HasSuffix(b, []byte("PAR1")) {
		t.Errorf("the file is not the export (%d bytes, starts %q)", len(b), b[:min(8, len(b))])
	}
}

// An error is one line with one "synthient: " prefix: the SDK's errors
// already start with "synthient: ", and the command must not add a
// second.
func TestErrorLineHasOnePrefix(t *testing.T) {
	srv := newServer(t)
	out := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []call{
		{args: []string{"--base-url", closedURL(t), "lookup", "ip", "1.1.1.1"}, env: keyEnv(srv)},
		against(srv, "exports", "meta", "proxies", "2026-13-01"),
		against(srv, "exports", "download", "proxies", "latest", "--out", out),
		against(srv, "lookup", "ip", "fe80::1%eth0"),
	} {
		r := c.run(t)
		if r.code == 0 {
			t.Fatalf("synthient %s succeeded", strings.Join(c.args, " "))
		}
		if strings.Contains(r.stderr, "synthient: synthient:") {
			t.Errorf("synthient %s: doubled prefix:\n%s", strings.Join(c.args, " "), r.stderr)
		}
	}
}

// -v logs each retry decision on stderr as one line, and never the key.
func TestVerbose(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// A success.
	r := runSrv(t, srv, "-v", "lookup", "ip", "1.1.1.1")
	wantCode(t, r, 0)
	re := regexp.MustCompile(`^attempt 1/3 GET /lookup/ip/\{ip\}: 200, request id ` + requestIDRe.String() + ` -> done$`)
	if ls := lines(r.stderr); len(ls) != 1 || !re.MatchString(ls[0]) {
		t.Errorf("-v stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "1.1.1.1") {
		t.Errorf("stdout: %s", r.stdout)
	}

	// --max-retries sets the attempts shown; a refused retry shows why.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r = runSrv(t, srv, "--verbose", "--max-retries", "5", "lookup", "ip", "1.1.1.1")
	wantCode(t, r, exitAPI)
	if !regexp.MustCompile(`(?m)^attempt 1/6 GET /lookup/ip/\{ip\}: 503, request id \S+ -> stop: may_have_been_processed$`).MatchString(r.stderr) {
		t.Errorf("-v stderr:\n%s", r.stderr)
	}

	// A retried 502 on the account (waits a real backoff of about 1s).
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	r = runSrv(t, srv, "-v", "account")
	wantCode(t, r, 0)
	ls := lines(r.stderr)
	if len(ls) != 2 ||
		!regexp.MustCompile(`^attempt 1/3 GET /account/me: 502, request id \S+ -> retry in [0-9.]+m?s$`).MatchString(ls[0]) ||
		!regexp.MustCompile(`^attempt 2/3 GET /account/me: 200, request id \S+ -> done$`).MatchString(ls[1]) {
		t.Errorf("-v stderr:\n%s", r.stderr)
	}

	// Nothing on stderr without -v.
	r = runSrv(t, srv, "account")
	wantCode(t, r, 0)
	if r.stderr != "" {
		t.Errorf("stderr without -v: %q", r.stderr)
	}
}

// --fake runs every command against an in-process fake, with no key.
func TestFakeEveryCommand(t *testing.T) {
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addrs.txt")
	if err := os.WriteFile(addrFile, []byte("# test\n1.1.1.1\n8.8.8.8\n\n2606:4700:4700::1111\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
			if len(ls) != 4 || !strings.HasPrefix(ls[0], "IP ") || !strings.HasPrefix(ls[1], "1.1.1.1 ") ||
				!strings.HasPrefix(ls[2], "8.8.8.8 ") || !strings.HasPrefix(ls[3], "2606:4700:4700::1111 ") {
				t.Errorf("table:\n%s", r.stdout)
			}
		}},
		{args: []string{"lookup", "ips", "--file", "-", "--concurrency", "2", "-o", "json"}, stdin: "9.9.9.9\n1.0.0.1\n", check: func(t *testing.T, r result) {
			if got := ndjsonIPs(t, r.stdout); strings.Join(got, " ") != "9.9.9.9 1.0.0.1" {
				t.Errorf("results: %v", got)
			}
		}},
		{args: []string{"lookup", "domain", "example.com", "--limit", "3"}, check: func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "Domain          example.com") {
				t.Errorf("domain:\n%s", r.stdout)
			}
			if n := strings.Count(r.stdout, ".example.com  "); n != 3 {
				t.Errorf("%d recent events, want 3:\n%s", n, r.stdout)
			}
		}},
		{args: []string{"account"}, check: contains("Name", "Grace Hopper", "Credits", "50000", "Scopes", "BASIC")},
		{args: []string{"health"}, check: func(t *testing.T, r result) {
			if r.stdout != "ok\n" {
				t.Errorf("health: %q", r.stdout)
			}
		}},
		{args: []string{"exports", "list", "proxies"}, check: contains("ID", "KIND", "SIZE", "hourly", "daily")},
		{args: []string{"exports", "list", "torrents", "--limit", "2"}, check: func(t *testing.T, r result) {
			if ls := lines(r.stdout); len(ls) != 5 || !strings.HasPrefix(ls[4], "more: --cursor ") {
				t.Errorf("a page of 2:\n%s", r.stdout)
			}
		}},
		{args: []string{"exports", "list", "ja4t", "--limit", "2", "--all"}, check: func(t *testing.T, r result) {
			if ls := lines(r.stdout); len(ls) < 4 || strings.Contains(r.stdout, "more:") {
				t.Errorf("--all:\n%s", r.stdout)
			}
		}},
		{args: []string{"exports", "meta", "proxies", "latest"}, check: contains("Stream", "proxies", "SHA-256", "Columns")},
		{args: []string{"exports", "download", "proxies", "latest", "--out", out}, check: downloaded(out, "")},
		{args: []string{"exports", "download", "proxies", "latest", "--out", out, "--verify", "--force"}, check: downloaded(out, "SHA-256 verified")},
		{args: []string{"stream", "proxies", "--max-events", "3"}, check: events(3, 3)},
		{args: []string{"stream", "helio/http", "--duration", "300ms"}, check: events(1, 100)},
		{args: []string{"stream", "anonymizers", "--reconnect", "--max-events", "3"}, check: events(3, 3)},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"--fake"}, tt.args...)
			r := call{args: args, stdin: strings.NewReader(tt.stdin)}.run(t)
			wantCode(t, r, 0, args...)
			if r.stderr != "" {
				t.Errorf("stderr: %q", r.stderr)
			}
			tt.check(t, r)
		})
	}
}

func contains(want ...string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("stdout does not hold %q:\n%s", w, r.stdout)
			}
		}
	}
}

func downloaded(path, note string) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		if !strings.HasPrefix(r.stdout, "wrote "+path+": proxies ") || !strings.Contains(r.stdout, note) {
			t.Errorf("stdout: %q", r.stdout)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
			t.Errorf("%s is not a Parquet export (%d bytes)", path, len(b))
		}
		if parts, _ := filepath.Glob(path + "*.part"); len(parts) != 0 {
			t.Errorf("temporary files were left: %v", parts)
		}
	}
}

// events checks that stdout holds between lo and hi JSON event lines.
func events(lo, hi int) func(t *testing.T, r result) {
	return func(t *testing.T, r result) {
		t.Helper()
		ls := lines(r.stdout)
		if len(ls) < lo || len(ls) > hi {
			t.Errorf("%d events, want %d to %d:\n%s", len(ls), lo, hi, r.stdout)
		}
		for _, l := range ls {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Errorf("event is not JSON: %q", l)
			}
		}
		if r.elapsed > 10*time.Second {
			t.Errorf("took %s", r.elapsed)
		}
	}
}

// stream --reconnect reopens a stream the server closed cleanly, at once,
// until --max-events.
func TestStreamReconnect(t *testing.T) {
	srv := newServer(t, synthienttest.WithMaxEvents(2))
	r := runSrv(t, srv, "stream", "proxies", "--reconnect", "--max-events", "5")
	wantCode(t, r, 0)
	events(5, 5)(t, r)
	if n := srv.Arrivals(synthienttest.RouteStream); n != 3 {
		t.Errorf("%d streams opened, want 3", n)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}

	// Without --reconnect the command ends with the stream.
	r = runSrv(t, srv, "stream", "proxies", "--max-events", "5")
	wantCode(t, r, 0)
	events(2, 2)(t, r)
}

// stream --reconnect whose --duration runs out while it waits to reopen
// after an error exits with that error's code, not 0.
func TestStreamReconnectEndsDown(t *testing.T) {
	srv := newServer(t)
	srv.Inject(synthienttest.RouteStream, 5, synthienttest.Fault{Status: 429})
	r := runSrv(t, srv, "stream", "proxies", "--reconnect", "--duration", "300ms")
	wantCode(t, r, exitAPI)
	if !strings.Contains(r.stderr, "429 Too Many Requests") || !strings.Contains(r.stderr, "reconnecting in 2s") {
		t.Errorf("stderr: %q", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout: %q", r.stdout)
	}
}

// With stderr on a terminal, a download draws a progress bar there, and
// stdout is as without one.
func TestDownloadProgressOnTerminal(t *testing.T) {
	srv := newServer(t)
	out := filepath.Join(t.TempDir(), "f.parquet")
	c := against(srv, "exports", "download", "proxies", "latest", "--out", out)
	c.terminal = true
	r := c.run(t)
	wantCode(t, r, 0)
	if !strings.Contains(r.stderr, "downloading") {
		t.Errorf("no progress bar on stderr: %q", r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "wrote ") {
		t.Errorf("stdout: %q", r.stdout)
	}
}

// With stderr on a terminal, a batch shows a spinner there; stdout is as
// without one. (Run with -race: the spinner must not race the batch.)
func TestBatchProgressOnTerminal(t *testing.T) {
	srv := newServer(t)
	c := against(srv, "-o", "json", "lookup", "ips", "--file", "-")
	c.terminal = true
	c.stdin = strings.NewReader(strings.Join(addrs(1500), "\n"))
	r := c.run(t)
	wantCode(t, r, 0)
	if got := ndjsonIPs(t, r.stdout); len(got) != 1500 {
		t.Errorf("%d results", len(got))
	}

	// From a regular file the bar knows the total; the file is still read
	// whole after it was counted. A byte order mark is not an address.
	file := filepath.Join(t.TempDir(), "ips.txt")
	if err := os.WriteFile(file, []byte("\ufeff"+strings.Join(addrs(1500), "\n")+"\n# end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c = against(srv, "-o", "json", "lookup", "ips", "--file", file)
	c.terminal = true
	r = c.run(t)
	wantCode(t, r, 0)
	if got := ndjsonIPs(t, r.stdout); len(got) != 1500 {
		t.Errorf("%d results from a file", len(got))
	}
	if !strings.Contains(r.stderr, "/1500") {
		t.Errorf("the progress bar does not show the total: %q", r.stderr)
	}
}

// The guided demo runs on its own fake, shows a retry and refused retries
// with their reasons, and ends well under a minute.
func TestDemo(t *testing.T) {
	t.Parallel()
	r := call{args: []string{"demo"}}.run(t)
	wantCode(t, r, 0, "demo")
	for _, want := range []string{
		"retry in",
		"stop: may_have_been_processed",
		"retry_after_exceeds_max",
		"429", "503", "502",
		"AllExports walked",
		"verified; API key sent to storage: false",
		"Done in",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output does not hold %q", want)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	if r.elapsed > 30*time.Second {
		t.Errorf("demo took %s", r.elapsed)
	}
}

// fake-server prints its base URL and key, serves them until interrupted,
// then exits 0.
func TestFakeServer(t *testing.T) {
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := call{args: []string{"-o", output, "fake-server", "--listen", "127.0.0.1:0"}, ctx: ctx, stdout: &syncBuffer{}}
			done := make(chan result, 1)
			go func() { done <- c.run(t) }()

			var base, key string
			waitFor(t, func() bool {
				s := c.stdout.String()
				if output == "json" {
					var v struct {
						BaseURL string `json:"base_url"`
						APIKey  string `json:"api_key"`
					}
					if !strings.HasSuffix(s, "\n") || json.Unmarshal([]byte(s), &v) != nil {
						return false
					}
					base, key = v.BaseURL, v.APIKey
					return true
				}
				m := regexp.MustCompile(`base URL:\s+(\S+)\nAPI key:\s+(\S+)\n`).FindStringSubmatch(s)
				if m == nil {
					return false
				}
				base, key = m[1], m[2]
				return true
			}, "the base URL")
			if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/api/v4") {
				t.Errorf("base URL %q", base)
			}

			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
			get := func(path, key string) (int, string) {
				t.Helper()
				req, err := http.NewRequest(http.MethodGet, base+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if key != "" {
					req.Header.Set("X-Api-Key", key)
				}
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, body := get("/health", ""); code != 200 || !strings.Contains(body, `"ok"`) {
				t.Errorf("GET /health: %d %s", code, body)
			}
			if code, body := get("/account/me", key); code != 200 || !strings.Contains(body, "Grace") {
				t.Errorf("GET /account/me with the printed key: %d %s", code, body)
			}

			// The printed values work for the command itself.
			r := runArgs(t, map[string]string{"SYNTHIENT_BASE_URL": base, "SYNTHIENT_API_KEY": key}, "lookup", "ip", "1.1.1.1")
			wantCode(t, r, 0)

			select {
			case r := <-done:
				t.Fatalf("fake-server ended before the interrupt: %d %s", r.code, r.stderr)
			case <-time.After(50 * time.Millisecond):
			}
			cancel()
			select {
			case r := <-done:
				wantCode(t, r, 0)
				if r.stderr != "" {
					t.Errorf("stderr: %q", r.stderr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("fake-server did not stop within 10s of the interrupt")
			}
			if _, err := hc.Get(base + "/health"); err == nil {
				t.Error("the fake still answers after fake-server returned")
			}
		})
	}
}

// fake-server on an address in use exits 2.
func TestFakeServerListenBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := runArgs(t, nil, "fake-server", "--listen", ln.Addr().String())
	wantCode(t, r, exitUsage)
	if !strings.Contains(r.stderr, "cannot listen on "+ln.Addr().String()) {
		t.Errorf("stderr: %q", r.stderr)
	}
}

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
