package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// maxDotEnv is the largest .env read.
const maxDotEnv = 1 << 20

// ReadDotEnv returns the value of SYNTHIENT_API_KEY in the .env file at
// path, and its line; "" when the file does not exist or does not set it.
// Only that variable is read: other lines are skipped, also the lines of
// a quoted value that spans lines. A line that sets it and cannot be
// read (an unclosed quote, a value that is not one word) is a *FileError.
// The last line that sets it wins, as in a shell.
func ReadDotEnv(path string) (key string, line int, err error) {
	b, err := os.ReadFile(path) //nolint:gosec // the .env of the working directory: reading it is the point
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	if len(b) > maxDotEnv {
		return "", 0, &FileError{Path: path, Msg: fmt.Sprintf("larger than %d bytes: not a .env file", maxDotEnv)}
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, value, ok := assignment(lines[i])
		if !ok {
			continue
		}
		if name != "SYNTHIENT_API_KEY" {
			i = skipQuoted(lines, i, value)
			continue
		}
		v, err := dotEnvValue(value)
		if err != nil {
			return "", 0, &FileError{Path: path, Line: i + 1, Msg: "SYNTHIENT_API_KEY: " + err.Error()}
		}
		key, line = v, i+1
	}
	return key, line, nil
}

// assignment splits a line NAME=VALUE (after "export ", around spaces);
// ok is false for a blank line, a comment or any other line.
func assignment(l string) (name, value string, ok bool) {
	l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
	if l == "" || strings.HasPrefix(l, "#") {
		return "", "", false
	}
	l = strings.TrimPrefix(l, "export ")
	name, value, ok = strings.Cut(l, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\"'") {
		return "", "", false
	}
	return name, strings.TrimSpace(value), true
}

// skipQuoted returns the last line of the value that opens on line i: a
// quoted value whose quote is not closed on its line runs on.
func skipQuoted(lines []string, i int, value string) int {
	if len(value) == 0 || value[0] != '"' && value[0] != '\'' {
		return i
	}
	q := value[0]
	if strings.IndexByte(value[1:], q) >= 0 {
		return i
	}
	for j := i + 1; j < len(lines); j++ {
		if strings.IndexByte(lines[j], q) >= 0 {
			return j
		}
	}
	return len(lines)
}

// dotEnvValue reads the value of an assignment: in double or single
// quotes, or bare up to a " #" comment. The key it holds is one word.
func dotEnvValue(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'"):
		end := strings.IndexByte(v[1:], v[0])
		if end < 0 {
			return "", errors.New("the quote is not closed on its line")
		}
		if rest := strings.TrimSpace(v[end+2:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", errors.New("text after the closing quote")
		}
		v = v[1 : end+1]
	default:
		if i := strings.Index(v, " #"); i >= 0 {
			v = v[:i]
		}
	}
	v = strings.TrimSpace(v)
	if strings.IndexFunc(v, notKeyRune) >= 0 {
		return "", errors.New("more than one word (white space or control characters), not a single API key")
	}
	return v, nil
}
