package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Tests of fields.go: the KEY=VALUE of -F and --raw-field.

// keyPath takes name, name[sub]... and a final [], and nothing else.
func TestKeyPath(t *testing.T) {
	t.Parallel()
	for key, want := range map[string][]string{
		"limit":       {"limit"},
		"ips[]":       {"ips", ""},
		"a[b][c]":     {"a", "b", "c"},
		"a[b][]":      {"a", "b", ""},
		"a b[c d]":    {"a b", "c d"},
		"":            nil,
		"[a]":         nil,
		"a]":          nil,
		"a[":          nil,
		"a[b":         nil,
		"a[]x":        nil,
		"a[][b]":      nil,
		"a[b]c":       nil,
		"a[b[c]]":     nil,
		"a[]]":        nil,
		"a[b]]":       nil,
		"ips[][]":     nil,
		"x[y][z][][]": nil,
	} {
		got, ok := keyPath(key)
		assert.Equal(t, want != nil, ok, "keyPath(%q)", key)
		assert.Equal(t, want, got, "keyPath(%q)", key)
	}
}

// FuzzParseField: parseField never panics; what it takes gives back its
// argument, and a key whose parts make it again.
func FuzzParseField(f *testing.F) {
	for _, s := range []string{"limit=5", "ips[]=1.1.1.1", "a[b][c]=x=y", "=v", "k", "a[b=1", "f=@-", "a[]x=1", "[]=", "a[][]=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		fd, err := parseField("-F", arg, true)
		if err != nil {
			return
		}
		if fd.key+"="+fd.value != arg {
			t.Fatalf("parseField(%q): key %q, value %q", arg, fd.key, fd.value)
		}
		key := fd.path[0]
		for _, sub := range fd.path[1:] {
			key += "[" + sub + "]"
		}
		if key != fd.key || strings.Contains(fd.path[0], "[") {
			t.Fatalf("parseField(%q): path %q does not make the key %q", arg, fd.path, fd.key)
		}
	})
}
