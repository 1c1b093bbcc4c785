package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// Tests of redact.go: the redactor.

// keyShapes finds every substring shaped like a key, in either case,
// whatever surrounds it, overlapping ones included.
func TestKeyShapes(t *testing.T) {
	t.Parallel()
	const k = clitest.PastedKey
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
		got := redact.KeyShapes(tt.s)
		if len(got) == 0 {
			got = nil // none: nil and empty alike
		}
		assert.Equal(t, tt.want, got, "redact.KeyShapes(%q)", tt.s)
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	const pasted, key = clitest.PastedKey, clitest.ConfiguredKey
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
	r := &redact.Redactor{}
	r.AddKeyShapes("account", pasted, // pasted as an argument
		"--cursor=AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE", // the value of a --flag=value
		"x=11111111-2222-4333-8444-555555555555",        // glued to something else
		"bcdef012-3456-4789-8abc-def012345678",
	)
	r.Add(key)
	r.Add("short") // too short to redact
	r.Add("sk_live_0123456789")
	r.Add("sk_live_0123456789abcdef") // holds the one before
	r.Add("0123456789abcdefghij")     // overlaps the one before
	r.Add("usk_live_0123456789abcdef")
	r.Add(`secret-with\`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.Redact([]byte(tt.in))
			assert.Equal(t, tt.want, string(got), "redact(%q)", tt.in)
			if json.Valid([]byte(tt.in)) {
				assert.True(t, json.Valid(got), "redact(%q) = %q is no longer JSON", tt.in, got)
			}
		})
	}
}
