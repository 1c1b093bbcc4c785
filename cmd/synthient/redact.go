package main

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// redacted is what a secret is printed as.
const redacted = "[redacted]"

// minSecretLen is the shortest configured key that is redacted: a shorter
// string is no real key, and replacing it everywhere would garble the
// output.
const minSecretLen = 8

// redactor holds what is never printed, on stdout or stderr: the
// configured API key and every command-line argument shaped like a key (a
// key pasted in the wrong place would otherwise come back in an "unknown
// command" or "not an IP address" message). The safeWriter applies it to
// every line. It is safe for concurrent use.
type redactor struct {
	mu      sync.Mutex
	secrets []string // longest first, so a secret inside another goes with it
}

// add adds a secret; one shorter than minSecretLen is ignored.
func (r *redactor) add(s string) {
	if len(s) < minSecretLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.secrets, s) {
		return
	}
	r.secrets = append(r.secrets, s)
	slices.SortStableFunc(r.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}

// forget removes a secret: for a key that is printed on purpose.
func (r *redactor) forget(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = slices.DeleteFunc(r.secrets, func(x string) bool { return x == s })
}

// addArgs adds every argument shaped like a key, also as the value of a
// --flag=value.
func (r *redactor) addArgs(args []string) {
	for _, arg := range args {
		if _, value, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
			arg = value
		}
		if arg = strings.TrimSpace(arg); looksLikeKey(arg) {
			r.add(arg)
		}
	}
}

// redact returns b with every secret replaced by [redacted]; b itself
// when it holds none.
func (r *redactor) redact(b []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redacted))
		}
	}
	return b
}

// keyShape is the shape of a Synthient API key, a UUID: 8-4-4-4-12
// hexadecimal digits, in either case.
var keyShape = regexp.MustCompile(`^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$`)

// looksLikeKey reports a string shaped like an API key.
func looksLikeKey(s string) bool { return keyShape.MatchString(s) }
