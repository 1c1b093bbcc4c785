// Package redact removes the secrets of a presigned URL's query from a
// text: the error a storage host answers a download with, or one net/http
// built around the URL, before the client shows it.
//
// The model. A presigned query's secrets are every form of it a storage
// host may echo (S3 and R2 echo the canonical request and the string they
// signed, in SignatureDoesNotMatch; a hostile host can echo anything):
// the raw query; each key=value pair; each value raw, decoded, and encoded
// again as a query and as a path would encode it, with upper- and
// lower-case escapes; each '/'-separated part of a decoded value (S3
// echoes the access key id and the scope of X-Amz-Credential apart); and
// the hexadecimal bytes of each of these of MinPart bytes or more, spaced
// or not (S3's CanonicalRequestBytes). Each is replaced by Mark, longest
// first. A text is read up to a limit, which can cut a secret short: a
// secret's beginning at the end of a text is replaced too. Shorter than
// MinValue bytes (MinPart for a part), a form is a word ("host", "auto",
// "s3"), not a secret, and stays: replacing it would garble the text.
package redact

import (
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
)

// Mark is what replaces a secret.
const Mark = "[REDACTED]"

// The shortest forms that are secrets.
const (
	MinValue = 4 // a query value, raw or decoded, or a pair
	MinPart  = 8 // a '/'-separated part of a decoded value; a form given in hexadecimal
)

// Query replaces the secrets of one presigned query. A nil *Query, of an
// empty query, replaces nothing. It is safe for concurrent use.
type Query struct {
	secrets  []string // longest first
	replacer *strings.Replacer
}

// NewQuery returns the Query of rawQuery; nil for an empty one.
func NewQuery(rawQuery string) *Query {
	if rawQuery == "" {
		return nil
	}
	set := forms(rawQuery)
	q := &Query{secrets: make([]string, 0, 3*len(set))}
	for s := range set {
		q.secrets = append(q.secrets, s)
		if len(s) >= MinPart {
			q.secrets = append(q.secrets, hex.EncodeToString([]byte(s)), spacedHex(s))
		}
	}
	slices.SortFunc(q.secrets, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(q.secrets))
	for _, s := range q.secrets {
		pairs = append(pairs, s, Mark)
	}
	q.replacer = strings.NewReplacer(pairs...)
	return q
}

// forms returns the set of the forms of rawQuery, other than
// hexadecimal, that are secrets.
func forms(rawQuery string) map[string]bool {
	set := map[string]bool{rawQuery: true}
	add := func(s string, min int) {
		if len(s) >= min {
			set[s] = true
		}
	}
	for _, pair := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		_, value, _ := strings.Cut(pair, "=")
		add(pair, MinValue)
		add(value, MinValue)
		decoded, err := url.QueryUnescape(value)
		if err != nil {
			continue
		}
		for _, s := range []string{decoded, url.QueryEscape(decoded), url.PathEscape(decoded)} {
			add(s, MinValue)
			add(lowerEscapes(s), MinValue)
		}
		for _, part := range strings.Split(decoded, "/") {
			add(part, MinPart)
		}
	}
	return set
}

// Redact returns s with every secret replaced, and a secret's beginning
// at the end of s.
func (q *Query) Redact(s string) string {
	if q == nil {
		return s
	}
	s = q.replacer.Replace(s)
	for _, secret := range q.secrets {
		// The longest tail of s, of MinValue bytes or more, that begins
		// secret.
		for i := max(0, len(s)-len(secret)+1); i <= len(s)-MinValue; i++ {
			if s[i] == secret[0] && strings.HasPrefix(secret, s[i:]) {
				return s[:i] + Mark
			}
		}
	}
	return s
}

// lowerEscapes returns s with the hexadecimal digits of its %XX escapes in
// lower case, as some encoders write them.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// spacedHex returns the bytes of s in hexadecimal, separated by spaces.
func spacedHex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(hex.EncodeToString([]byte{s[i]}))
	}
	return b.String()
}
