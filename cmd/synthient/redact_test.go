package main

// Tests of redact.go: the redactor, and keys never echoed.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyShapes finds every substring shaped like a key, in either case,
// whatever surrounds it, overlapping ones included.
func TestKeyShapes(t *testing.T) {
	t.Parallel()
	const k = pastedKey
	tests := []struct {
		s    string
		want []string
	}{
		{k, []string{k}},
		{strings.ToUpper(k), []string{strings.ToUpper(k)}},
		{"00000000-0000-0000-0000-000000000000", []string{"00000000-0000-0000-0000-000000000000"}},
		{"SYNTHIENT_API_KEY=" + k, []string{k}},
		{"-o" + k, []string{k}},
		{"--" + k, []string{k}},
		{"{" + k + "}", []string{k}},
		{"x-api-key: " + k + " and " + k, []string{k, k}},
		// Two keys sharing digits: both are found.
		{"11111111-1111-1111-1111-111111111111-1111-1111-1111-111111111111",
			[]string{"11111111-1111-1111-1111-111111111111", "11111111-1111-1111-1111-111111111111"}},
		{"3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6", nil},  // one digit short
		{"3f2a9c1e7b4d-4e8f-9a6b-1c2d3e4f5a6b-", nil}, // hyphens misplaced
		{"3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6g", nil}, // not hexadecimal
		{"2026-06-10/13", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := keyShapes(tt.s)
		if len(got) == 0 {
			got = nil // none: nil and empty alike
		}
		assert.Equal(t, tt.want, got, "keyShapes(%q)", tt.s)
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	const pasted, key = pastedKey, configuredKey
	tests := []struct {
		name, in, want string
	}{
		{"arguments", pasted + " AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE 11111111-2222-4333-8444-555555555555",
			"[redacted] [redacted] [redacted]"},
		{"short strings are no secrets", "short", "short"},
		{"a secret inside another goes with it", "sk_live_0123456789abcdef", "[redacted]"},
		{"overlapping secrets are replaced as one", "xxsk_live_0123456789abcdefghij!", "xx[redacted]!"},
		{"upper case", strings.ToUpper(key) + " " + strings.ToUpper(pasted), "[redacted] [redacted]"},
		{"mixed case", "Sk_LiVe_0123456789ABCDEF", "[redacted]"},
		{"non-ASCII before keeps the positions", "ǅİẞ " + strings.ToUpper(key) + " ǅ", "ǅİẞ [redacted] ǅ"},
		// Escapes keep the bytes they need, so that JSON stays JSON.
		{"after \\u", `{"k":"\u` + key + `"}`, `{"k":"\u123e[redacted]"}`},
		{"after \\u and two digits", `{"k":"\u00` + key + `"}`, `{"k":"\u0012[redacted]"}`},
		{"after \\u and four digits", `{"k":"\u0041` + key + `"}`, `{"k":"\u0041[redacted]"}`},
		{"after an escaped backslash", `{"k":"\\u` + key + `"}`, `{"k":"\\u[redacted]"}`},
		{"after three backslashes", `{"k":"\\\u` + key + `"}`, `{"k":"\\\u123e[redacted]"}`},
		{"a letter escape", `{"k":"\` + "bcdef012-3456-4789-8abc-def012345678" + `"}`, `{"k":"\b[redacted]"}`},
		{"a secret starting with u", `["\usk_live_0123456789abcdef"]`, `["\u[redacted]"]`},
		{"a secret ending with a backslash", `["xsecret-with\\"]`, `["x[redacted]\\"]`},
	}
	r := &redactor{}
	r.addKeyShapes("account", pasted, // pasted as an argument
		"--cursor=AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE", // the value of a --flag=value
		"x=11111111-2222-4333-8444-555555555555",        // glued to something else
		"bcdef012-3456-4789-8abc-def012345678",
	)
	r.add(key)
	r.add("short") // too short to redact
	r.add("sk_live_0123456789")
	r.add("sk_live_0123456789abcdef") // holds the one before
	r.add("0123456789abcdefghij")     // overlaps the one before
	r.add("usk_live_0123456789abcdef")
	r.add(`secret-with\`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.redact([]byte(tt.in))
			assert.Equal(t, tt.want, string(got), "redact(%q)", tt.in)
			if json.Valid([]byte(tt.in)) {
				assert.True(t, json.Valid(got), "redact(%q) = %q is no longer JSON", tt.in, got)
			}
		})
	}
}

// An argument shaped like a key, or equal to the configured key, is never
// echoed, on stdout or stderr, by cobra's errors, the CLI's own or the
// SDK's: it is printed as [redacted].
func TestKeyArgumentNeverEchoed(t *testing.T) {
	t.Parallel()
	const pasted = pastedKey
	const configured = "sk_live_not_a_uuid_0123456789" // a key of another shape
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(configured+"\n"), 0o600))
	addrFile := filepath.Join(dir, "addrs")
	require.NoError(t, os.WriteFile(addrFile, []byte(pasted+"\n"), 0o600))
	headerFile := filepath.Join(dir, "header")
	require.NoError(t, os.WriteFile(headerFile, []byte("x-api-key: "+pasted+"\n"), 0o600))
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
		// cobra finds an unknown command before it parses the flags.
		{"--api-key KEY, KEY as the command", []string{"--api-key", configured, configured}, "", configured, exitUsage},
		{"--api-key=KEY, KEY as the command", []string{"--api-key=" + configured, configured}, "", configured, exitUsage},
		{"-api-key=KEY alone", []string{"-api-key=" + configured}, "", configured, exitUsage},
		{"--api-key-file, KEY as the command", []string{"--api-key-file", keyFile, configured}, "", configured, exitUsage},
		{"--api-key-file=, KEY as the command", []string{"--api-key-file=" + keyFile, configured}, "", configured, exitUsage},
		// A key glued to something else.
		{"NAME=KEY", []string{"SYNTHIENT_API_KEY=" + pasted}, "", pasted, exitUsage},
		{"-oKEY", []string{"-o" + pasted, "account"}, "", pasted, exitUsage},
		{"-xKEY", []string{"-x" + pasted}, "", pasted, exitUsage},
		{"--KEY", []string{"--" + pasted}, "", pasted, exitUsage},
		{"{KEY}", []string{"{" + pasted + "}"}, "", pasted, exitUsage},
		{"x-api-key: KEY line in the address file", []string{"lookup", "ips", "--file", headerFile}, "", pasted, exitUsage},
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
			requireCode(t, r, tt.code, c.args...)
			assert.NotContains(t, r.stdout, tt.secret, "stdout echoes the key")
			assert.NotContains(t, r.stderr, tt.secret, "stderr echoes the key")
			assert.Contains(t, r.stdout+r.stderr, redacted, "the output")
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}

// FuzzRedactJSON: redacting keeps valid JSON valid, also where a secret
// begins inside an escape sequence, in either case, whether the line is
// redacted alone or as the safeWriter prints a stream line. The secret is
// a piece of the input made of what a key is made of (letters, digits,
// '-', '_' and, for good measure, '\'); one that could be part of a
// number is left out (a key of digits alone would cut a number in two).
func FuzzRedactJSON(f *testing.F) {
	for _, s := range []struct {
		in       string
		start, n uint16
	}{
		{`{"k":"\u123e4567-e89b-12d3-a456-426614174000"}`, 8, 36},
		{`{"k":"\u00e9abcdefgh"}`, 9, 9},
		{`{"k":"\u00e9abcdefgh"}`, 7, 10},
		{`["\\\nsecret_key_1\\"]`, 5, 13},
		{`["\b\f\n\r\t\"\/\\ key-000000000000x"]`, 18, 20},
		{`{"a":[1,2.5e-7,{"b":"Sk_Live_ABCDEFGH"}],"c":null}`, 22, 16},
	} {
		f.Add([]byte(s.in), s.start, s.n, false)
		f.Add([]byte(s.in), s.start, s.n, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, start, n uint16, upper bool) {
		if !json.Valid(in) {
			return
		}
		lo := min(int(start), len(in))
		secret := string(in[lo:min(lo+int(n), len(in))])
		if len(secret) < minSecretLen || strings.Trim(secret, "0123456789eE-") == "" ||
			strings.Trim(secret, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\\") != "" {
			return
		}
		if upper {
			secret = strings.ToUpper(secret)
		}
		r := &redactor{}
		r.add(secret)
		out := r.redact(in)
		require.True(t, json.Valid(out), "redact(%q) with the secret %q = %q: no longer JSON", in, secret, out)
		line := writeAll(t, r, appendJSON(nil, in))
		require.True(t, json.Valid([]byte(line)), "the stream line %q with the secret %q is printed as %q: no longer JSON", in, secret, line)
	})
}
