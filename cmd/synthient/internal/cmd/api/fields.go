package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
)

// A field is one KEY=VALUE of -F/--field or --raw-field, as gh api takes
// them.
type field struct {
	flag  string   // "-F" or "--raw-field", for messages
	arg   string   // as given
	key   string   // as given: the query's key
	path  []string // the key's name, then each [sub]; "" last for [] (append)
	value string   // as given
	typed bool     // -F: true, false, null, integers and @FILE take their meaning
}

// parseField parses arg, KEY=VALUE, of flag. KEY is a name, then any
// [sub] (an object's member), then at most one [] (a list's next item):
// ips[]=1.1.1.1, a[b][c]=1, a[b][]=1.
func parseField(flag, arg string, typed bool) (field, error) {
	key, value, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return field{}, clierr.Usagef("%s %q is not key=value", flag, arg)
	}
	path, ok := keyPath(key)
	if !ok {
		return field{}, clierr.Usagef("%s %q: the key %q is not name, name[sub]... or name[]", flag, arg, key)
	}
	return field{flag: flag, arg: arg, key: key, path: path, value: value, typed: typed}, nil
}

// keyPath splits key into its name and the subs of its brackets, "" for
// a final []; ok is false for a key that is not name[sub]...[].
func keyPath(key string) (path []string, ok bool) {
	i := strings.IndexByte(key, '[')
	if i < 0 {
		i = len(key)
	}
	name, rest := key[:i], key[i:]
	if name == "" || strings.Contains(name, "]") {
		return nil, false
	}
	path = []string{name}
	for rest != "" {
		end := strings.IndexByte(rest, ']')
		if rest[0] != '[' || end < 0 || strings.Contains(rest[1:end], "[") {
			return nil, false
		}
		sub := rest[1:end]
		if rest = rest[end+1:]; sub == "" && rest != "" {
			return nil, false // [] only last
		}
		path = append(path, sub)
	}
	return path, true
}

// resolve returns the field's value: a string, or for -F true, false,
// null (nil), an integer (int64), or the text of the file @FILE names
// (@- for stdin), read by read.
func (f field) resolve(ctx context.Context, read func(ctx context.Context, name, what string) ([]byte, error)) (any, error) {
	if !f.typed {
		return f.value, nil
	}
	switch v := f.value; {
	case v == "true", v == "false":
		return v == "true", nil
	case v == "null":
		return nil, nil
	case strings.HasPrefix(v, "@"):
		b, err := read(ctx, v[1:], fmt.Sprintf("%s %s", f.flag, f.arg))
		return string(b), err
	default:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n, nil
		}
		return v, nil
	}
}

// fields are the resolved fields of a command line, in order: --raw-field
// first, then -F, as gh api takes them.
type fields struct {
	list   []field
	values []any
}

// query adds the fields to q, each KEY as given, with its value as text
// (null: empty).
func (fs fields) query(q url.Values) {
	for i, f := range fs.list {
		switch v := fs.values[i].(type) {
		case nil:
			q.Add(f.key, "")
		case string:
			q.Add(f.key, v)
		default:
			q.Add(f.key, fmt.Sprint(v))
		}
	}
}

// body returns the fields as a JSON object, nested as their keys say.
func (fs fields) body() ([]byte, error) {
	obj, err := nest(fs.list, fs.values)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// nest returns the object the fields of list make, each with its value
// of values (nil values: each nil, to check the keys alone). A key given
// both as a value and as an object or list (a=1 with a[b]=2, or a[]=1
// with a=2) is a usage error, in the query of a GET as in a body: the
// fields are checked with it before anything is read or sent.
func nest(list []field, values []any) (map[string]any, error) {
	obj := map[string]any{}
	for i, f := range list {
		var v any
		if values != nil {
			v = values[i]
		}
		if !set(obj, f.path, v) {
			return nil, clierr.Usagef("%s %q: %s is given twice, as a value and as an object or list", f.flag, f.arg, f.path[0])
		}
	}
	return obj, nil
}

// set sets the member of obj that path names to v; false when path runs
// into a member that is already something else. A member set to nil (-F
// a=null) is a value.
func set(obj map[string]any, path []string, v any) bool {
	name := path[0]
	prev, present := obj[name]
	list, isList := prev.([]any)
	child, isObj := prev.(map[string]any)
	switch {
	case len(path) == 1:
		if isObj || isList {
			return false
		}
		obj[name] = v
		return true
	case present && !isList && path[1] == "", present && !isObj && path[1] != "":
		return false
	case path[1] == "": // name[]: the list's next item
		obj[name] = append(list, v)
		return true
	}
	if child == nil {
		child = map[string]any{}
		obj[name] = child
	}
	return set(child, path[1:], v)
}
