package redact_test

// Tests of redact.go: every form of a presigned query that a storage host
// may echo is replaced, and nothing else.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient/internal/redact"
)

// query is a presigned query (S3 style) of the tests.
const query = "X-Amz-Credential=AKIAEXAMPLE%2F20260610%2Fauto%2Fs3%2Faws4_request&X-Amz-SignedHeaders=host&X-Amz-Signature=0123456789abcdef;tok=a%2Bb%2Fc%3D%3Dxyz&bad=%zz12"

func TestRedact(t *testing.T) {
	t.Parallel()
	q := redact.NewQuery(query)
	const m = redact.Mark
	for _, tc := range []struct{ name, in, want string }{
		{"the whole query, once", "GET /o?" + query + " end", "GET /o?" + m + " end"},
		{"a pair", "X-Amz-Signature=0123456789abcdef!", m + "!"},
		{"a raw value", "sig 0123456789abcdef.", "sig " + m + "."},
		{"a decoded value", "cred AKIAEXAMPLE/20260610/auto/s3/aws4_request.", "cred " + m + "."},
		{"a value escaped again as a path would", "tok a+b%2Fc==xyz.", "tok " + m + "."},
		{"a value escaped again as a query would", "tok a%2Bb%2Fc%3D%3Dxyz.", "tok " + m + "."},
		{"lower-case escapes", "cred AKIAEXAMPLE%2f20260610%2fauto%2fs3%2faws4_request.", "cred " + m + "."},
		{"a part of a decoded value", "key AKIAEXAMPLE scope 20260610 aws4_request", "key " + m + " scope " + m + " " + m},
		{"short parts stay", "auto s3", "auto s3"},
		{"a value of 4 bytes", "signed host", "signed " + m},
		{"a value that does not decode, raw", "bad %zz12.", "bad " + m + "."},
		{"hexadecimal", "hex 30313233343536373839616263646566.", "hex " + m + "."},
		{"spaced hexadecimal", "bytes 30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66.", "bytes " + m + "."},
		{"a secret's beginning at the end", "cut short: 01234", "cut short: " + m},
		{"three bytes of one at the end stay", "cut short: 012", "cut short: 012"},
		{"nothing secret", "SignatureDoesNotMatch", "SignatureDoesNotMatch"},
		{"empty", "", ""},
	} {
		assert.Equal(t, tc.want, q.Redact(tc.in), tc.name)
	}
}

// TestRedactNothing: the Query of an empty query is nil and replaces
// nothing.
func TestRedactNothing(t *testing.T) {
	t.Parallel()
	q := redact.NewQuery("")
	assert.Nil(t, q)
	assert.Equal(t, "X-Amz-Signature=0123456789abcdef", q.Redact("X-Amz-Signature=0123456789abcdef"))
}

// FuzzRedact: whatever the query and the text, Redact never panics; a
// text that held a query of a pair holds it no more (a query with no
// bracket: the Mark cannot make it again); the Query of an empty query
// changes nothing.
func FuzzRedact(f *testing.F) {
	f.Add(query, "echo "+query)
	f.Add("a=bcde", "xx a=bcd")
	f.Fuzz(func(t *testing.T, rawQuery, text string) {
		got := redact.NewQuery(rawQuery).Redact(text)
		switch {
		case rawQuery == "":
			assert.Equal(t, text, got)
		case strings.Contains(rawQuery, "=") && !strings.ContainsAny(rawQuery, "[]") && strings.Contains(text, rawQuery):
			assert.NotContains(t, got, rawQuery)
		}
	})
}
