package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLooksLikeKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want bool
	}{
		{"3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b", true},
		{"3F2A9C1E-7B4D-4E8F-9A6B-1C2D3E4F5A6B", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6", false},   // one digit short
		{"3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6bb", false}, // one too many
		{"3f2a9c1e7b4d-4e8f-9a6b-1c2d3e4f5a6b-", false},  // hyphens misplaced
		{"3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6g", false},  // not hexadecimal
		{"2026-06-10/13", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := looksLikeKey(tt.s); got != tt.want {
			t.Errorf("looksLikeKey(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := &redactor{}
	r.addArgs([]string{
		"account", "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b", // pasted as an argument
		"--cursor=AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE", // the value of a --flag=value
		"x=11111111-2222-4333-8444-555555555555",        // not a flag: the whole argument is no key
	})
	r.add("short") // too short to redact
	r.add("sk_live_0123456789")
	r.add("sk_live_0123456789abcdef") // holds the one before: replaced whole
	in := "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE 11111111-2222-4333-8444-555555555555 short sk_live_0123456789abcdef"
	want := "[redacted] [redacted] 11111111-2222-4333-8444-555555555555 short [redacted]"
	if got := string(r.redact([]byte(in))); got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

// An argument shaped like a key, or equal to the configured key, is never
// echoed, on stdout or stderr, by cobra's errors, the CLI's own or the
// SDK's: it is printed as [redacted].
func TestKeyArgumentNeverEchoed(t *testing.T) {
	t.Parallel()
	const pasted = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
	const configured = "sk_live_not_a_uuid_0123456789" // a key of another shape
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(configured+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrFile := filepath.Join(dir, "addrs")
	if err := os.WriteFile(addrFile, []byte(pasted+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "f.parquet")
	tests := []struct {
		name   string
		args   []string
		envKey string // SYNTHIENT_API_KEY; the fake's key when empty
		secret string
		code   int
	}{
		{"account KEY", []string{"account", pasted}, "", pasted, exitUsage},
		{"KEY alone", []string{pasted}, "", pasted, exitUsage},
		{"help KEY", []string{"help", pasted}, "", pasted, exitOK},
		{"lookup KEY", []string{"lookup", pasted}, "", pasted, exitUsage},
		{"lookup ip KEY", []string{"lookup", "ip", pasted}, "", pasted, exitUsage},
		{"flag value", []string{"lookup", "domain", "example.com", "--limit", pasted}, "", pasted, exitUsage},
		{"--flag=KEY", []string{"--timeout=" + pasted, "account"}, "", pasted, exitUsage},
		{"--output KEY", []string{"--output", pasted, "account"}, "", pasted, exitUsage},
		{"exports list KEY", []string{"exports", "list", pasted}, "", pasted, exitUsage},
		{"SDK: export id", []string{"exports", "meta", "proxies", pasted}, "", pasted, exitUsage},
		{"SDK: download id", []string{"exports", "download", "proxies", pasted, "--out", out}, "", pasted, exitUsage},
		{"stream KEY", []string{"stream", pasted}, "", pasted, exitUsage},
		{"key line in the address file", []string{"lookup", "ips", "--file", addrFile}, "", pasted, exitUsage},
		{"--api-key KEY, then KEY", []string{"--api-key", configured, "account", configured}, "", configured, exitUsage},
		{"SYNTHIENT_API_KEY, then KEY", []string{"account", configured}, configured, configured, exitUsage},
		{"--api-key-file, then KEY", []string{"--api-key-file", keyFile, "account", configured}, "", configured, exitUsage},
		{"--api-key-file, then KEY to the CLI", []string{"--api-key-file", keyFile, "lookup", "ip", configured}, "", configured, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := against(srv, tt.args...)
			if tt.envKey != "" {
				c.env = map[string]string{"SYNTHIENT_API_KEY": tt.envKey}
			}
			r := c.run(t)
			wantCode(t, r, tt.code, c.args...)
			for what, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if strings.Contains(s, tt.secret) {
					t.Errorf("%s echoes the key:\n%s", what, s)
				}
			}
			if !strings.Contains(r.stdout+r.stderr, redacted) {
				t.Errorf("no %s in the output:\nstdout:\n%s\nstderr:\n%s", redacted, r.stdout, r.stderr)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}
