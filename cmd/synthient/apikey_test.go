package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --api-key-file reads the key from a file or stdin, trimmed of the
// newline and spaces around it, over SYNTHIENT_API_KEY; a file that is
// missing, empty, too big or holds more than a key, and a combination
// that cannot mean one key, are usage errors (exit 2) that send nothing
// and never show what the file holds.
func TestAPIKeyFile(t *testing.T) {
	t.Parallel()
	const secretLine = "second-line-secret"
	tests := []struct {
		name    string
		content string // the key file's; KEY is the fake's key
		args    []string
		stdin   string
		envKey  string // SYNTHIENT_API_KEY
		code    int
		stderr  string // in stderr, for a failure
	}{
		{name: "key and newline", content: "KEY\n", args: []string{"--api-key-file", "FILE", "account"}},
		{name: "spaces and CRLF", content: "  KEY \r\n", args: []string{"--api-key-file", "FILE", "account"}},
		{name: "no newline", content: "KEY", args: []string{"--api-key-file", "FILE", "account"}},
		{name: "stdin", args: []string{"--api-key-file", "-", "account"}, stdin: "KEY\n"},
		{name: "over SYNTHIENT_API_KEY", content: "KEY\n", args: []string{"--api-key-file", "FILE", "account"},
			envKey: "00000000-0000-4000-8000-000000000000"},
		{name: "health", content: "KEY\n", args: []string{"--api-key-file", "FILE", "health"}},
		{name: "empty file", content: "", args: []string{"--api-key-file", "FILE", "account"},
			code: exitUsage, stderr: "--api-key-file: FILE is empty"},
		{name: "white space only", content: " \n\t\n", args: []string{"--api-key-file", "FILE", "account"},
			code: exitUsage, stderr: "--api-key-file: FILE is empty"},
		{name: "empty stdin", args: []string{"--api-key-file", "-", "account"},
			code: exitUsage, stderr: "--api-key-file: stdin is empty"},
		{name: "two lines", content: "KEY\n" + secretLine + "\n", args: []string{"--api-key-file", "FILE", "account"},
			code: exitUsage, stderr: "FILE holds more than one word"},
		{name: "too large", content: strings.Repeat(secretLine, 300), args: []string{"--api-key-file", "FILE", "account"},
			code: exitUsage, stderr: "FILE is larger than 4096 bytes"},
		{name: "missing file", args: []string{"--api-key-file", "MISSING", "account"},
			code: exitUsage, stderr: "no such file or directory"},
		{name: "a directory", args: []string{"--api-key-file", "DIR", "account"},
			code: exitUsage, stderr: "--api-key-file: reading DIR"},
		{name: "with --api-key", content: "KEY\n", args: []string{"--api-key-file", "FILE", "--api-key", "KEY", "account"},
			code: exitUsage, stderr: "--api-key and --api-key-file cannot be combined"},
		{name: "with --fake", content: "KEY\n", args: []string{"--fake", "--api-key-file", "FILE", "account"},
			code: exitUsage, stderr: "cannot be combined with --api-key-file"},
		{name: "stdin twice", args: []string{"--api-key-file", "-", "lookup", "ips", "--file", "-"}, stdin: "KEY\n",
			code: exitUsage, stderr: "--api-key-file - and --file - cannot both read stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "key")
			if err := os.WriteFile(file, []byte(strings.ReplaceAll(tt.content, "KEY", srv.APIKey)), 0o600); err != nil {
				t.Fatal(err)
			}
			paths := strings.NewReplacer("FILE", file, "MISSING", filepath.Join(dir, "missing"), "DIR", dir, "KEY", srv.APIKey)
			var args []string
			if tt.args[0] != "--fake" {
				args = []string{"--base-url", srv.URL}
			}
			for _, a := range tt.args {
				args = append(args, paths.Replace(a))
			}
			c := call{args: args, env: map[string]string{"SYNTHIENT_API_KEY": tt.envKey},
				stdin: strings.NewReader(strings.ReplaceAll(tt.stdin, "KEY", srv.APIKey))}
			r := c.run(t)
			wantCode(t, r, tt.code, args...)
			if tt.code == exitOK {
				if r.stderr != "" {
					t.Errorf("stderr: %q", r.stderr)
				}
				return
			}
			if want := paths.Replace(tt.stderr); !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not hold %q:\n%s", want, r.stderr)
			}
			for _, s := range []string{srv.APIKey, secretLine} {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("the output shows what the key file holds (%q):\nstdout:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}
