// Package redact keeps secrets out of what the command prints: the
// configured API key and every substring of the command line shaped like
// one (a Synthient key is a UUID).
package redact

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"sync"
)

// Redacted is what a secret is printed as.
const Redacted = "[redacted]"

// MinSecretLen is the shortest configured key that is redacted: a shorter
// string is no real key, and replacing it everywhere would garble the
// output.
const MinSecretLen = 8

// Redactor holds what is never printed, on stdout or stderr: the
// configured API key and every substring of a command-line argument
// shaped like a key (a key pasted in the wrong place would otherwise come
// back in an "unknown command" or "not an IP address" message). The
// textsafe.Writer applies it to every line. The zero value holds no
// secret. It is safe for concurrent use.
type Redactor struct {
	mu      sync.Mutex
	secrets [][]byte // ASCII-lower-cased
	lower   []byte   // scratch: the text being redacted, lower-cased
	spans   []span   // scratch: where secrets were found
}

// Count returns how many secrets r holds.
func (r *Redactor) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.secrets)
}

// span is the byte range [start, end) of a secret in a text.
type span struct{ start, end int }

// Add adds a secret; one shorter than MinSecretLen is ignored.
func (r *Redactor) Add(s string) {
	if len(s) < MinSecretLen {
		return
	}
	l := asciiLower(nil, []byte(s))
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.ContainsFunc(r.secrets, func(x []byte) bool { return bytes.Equal(x, l) }) {
		r.secrets = append(r.secrets, l)
	}
}

// Forget removes a secret: for a key that is printed on purpose.
func (r *Redactor) Forget(s string) {
	l := asciiLower(nil, []byte(s))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = slices.DeleteFunc(r.secrets, func(x []byte) bool { return bytes.Equal(x, l) })
}

// AddKeyShapes adds every substring of the texts (the command-line
// arguments, a line of a lookup ips file) shaped like a key: a whole
// argument, the value of a --flag=value, and a key glued to anything else
// (-o<key>, NAME=<key>, {<key>}).
func (r *Redactor) AddKeyShapes(texts ...string) {
	for _, s := range texts {
		for _, k := range KeyShapes(s) {
			r.Add(k)
		}
	}
}

// ReplaceKeyShapes returns s with every substring shaped like a key
// replaced by [redacted], in one pass: for a text printed once, whose key
// shapes need not join the secrets.
func ReplaceKeyShapes(s string) string {
	// Again while one is left: key shapes can overlap ([redacted] holds
	// none, so this ends).
	for keyShape.MatchString(s) {
		s = keyShape.ReplaceAllLiteralString(s, Redacted)
	}
	return s
}

// RedactString is Redact for a string: for a text that is cut before it
// is printed, where the textsafe.Writer would no longer find a cut secret.
func (r *Redactor) RedactString(s string) string {
	return string(r.Redact([]byte(s)))
}

// Redact returns b with every secret replaced by [redacted], in any ASCII
// case (a server may echo a key upper-cased); b itself when it holds
// none. Overlapping secrets are replaced as one. Inside a JSON or Go
// escape sequence, the bytes the escape needs are kept (see escapeBounds),
// so that a JSON line stays valid.
func (r *Redactor) Redact(b []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.secrets) == 0 {
		return b
	}
	r.lower = asciiLower(r.lower[:0], b)
	r.spans = r.spans[:0]
	for _, s := range r.secrets {
		for i := 0; ; {
			j := bytes.Index(r.lower[i:], s)
			if j < 0 {
				break
			}
			r.spans = append(r.spans, span{i + j, i + j + len(s)})
			i += j + 1
		}
	}
	if len(r.spans) == 0 {
		return b
	}
	slices.SortFunc(r.spans, func(x, y span) int { return cmp.Compare(x.start, y.start) })
	out := make([]byte, 0, len(b)+len(Redacted))
	prev, cur := 0, r.spans[0]
	flush := func(sp span) {
		start, end := escapeBounds(b, sp.start, sp.end)
		if start >= end {
			return // nothing left to replace (no secret is that short)
		}
		out = append(out, b[prev:start]...)
		out = append(out, Redacted...)
		prev = end
	}
	for _, sp := range r.spans[1:] {
		if sp.start <= cur.end {
			cur.end = max(cur.end, sp.end)
			continue
		}
		flush(cur)
		cur = sp
	}
	flush(cur)
	return append(out, b[prev:]...)
}

// escapeBounds narrows the span [start, end) of a secret in b so that
// replacing it leaves every escape sequence around it whole: JSON (and Go)
// text such as "\u123e4567-..." holds a secret's first characters in an
// escape, and cutting the escape would make the line invalid JSON. The
// span's start moves past what it cuts of an escape (escapeStart); one
// that ends with the backslash that opens an escape keeps that backslash.
func escapeBounds(b []byte, start, end int) (int, int) {
	start = escapeStart(b, start, end)
	if end > start && b[end-1] == '\\' && oddBackslashesBefore(b, end) {
		end--
	}
	return start, end
}

// escapeStart returns where the replacement of the span [start, end) may
// begin. A span that begins at the letter of an escape (after an odd run
// of backslashes) keeps that letter and, for \u, the hexadecimal digits
// that follow, up to four; one that begins among the four digits of a \u
// escape keeps the rest of them; any other span begins at start.
func escapeStart(b []byte, start, end int) int {
	if oddBackslashesBefore(b, start) {
		if b[start] == 'u' {
			return start + 1 + hexRun(b[start+1:end], 4)
		}
		return start + 1
	}
	j := hexRunBefore(b, start, 4)
	if u := start - j - 1; j < 4 && u >= 0 && b[u] == 'u' && oddBackslashesBefore(b, u) {
		return start + hexRun(b[start:end], 4-j)
	}
	return start
}

// oddBackslashesBefore reports whether an odd run of backslashes ends
// right before b[i]: b[i] is then the letter of an escape sequence.
func oddBackslashesBefore(b []byte, i int) bool {
	n := 0
	for i-n-1 >= 0 && b[i-n-1] == '\\' {
		n++
	}
	return n%2 == 1
}

// hexRun returns how many of the first limit bytes of b are hexadecimal
// digits, counting from the start.
func hexRun(b []byte, limit int) int {
	n := 0
	for n < limit && n < len(b) && isHex(b[n]) {
		n++
	}
	return n
}

// hexRunBefore returns how many of the limit bytes right before b[i] are
// hexadecimal digits, counting back from b[i-1].
func hexRunBefore(b []byte, i, limit int) int {
	n := 0
	for n < limit && i-n-1 >= 0 && isHex(b[i-n-1]) {
		n++
	}
	return n
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// asciiLower appends b to dst with the ASCII letters lower-cased and every
// other byte as it is: the result has b's length, so an index in it is an
// index in b (bytes.ToLower may change the length of text that is not
// ASCII).
func asciiLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// keyShape is the shape of a Synthient API key, a UUID: 8-4-4-4-12
// hexadecimal digits, in either case.
var keyShape = regexp.MustCompile(`[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}`)

// KeyShapes returns every substring of s shaped like a key, overlapping
// ones included.
func KeyShapes(s string) []string {
	var keys []string
	for i := 0; i < len(s); {
		loc := keyShape.FindStringIndex(s[i:])
		if loc == nil {
			break
		}
		keys = append(keys, s[i+loc[0]:i+loc[1]])
		i += loc[0] + 1
	}
	return keys
}
