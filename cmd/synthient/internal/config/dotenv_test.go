package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// .env gives SYNTHIENT_API_KEY and nothing else, parsed by godotenv:
// bare, quoted, after export, with comments; other lines, multi-line
// values included, are skipped; $NAME expands to what the file set
// before, never to the process's environment; a file that mentions the
// key and cannot be read is a *FileError that never shows a value.
func TestReadDotEnv(t *testing.T) {
	t.Parallel()
	const k = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
	tests := []struct {
		name, text, key string
		err             string
	}{
		{"bare", "SYNTHIENT_API_KEY=" + k + "\n", k, ""},
		{"export and spaces", "# keys\n\nexport SYNTHIENT_API_KEY = " + k + "  # the team's\n", k, ""},
		{"double quotes", `SYNTHIENT_API_KEY="` + k + `"` + "\r\n", k, ""},
		{"single quotes", "OTHER=1\nSYNTHIENT_API_KEY='" + k + "'\n", k, ""},
		{"the last wins", "SYNTHIENT_API_KEY=old\nSYNTHIENT_API_KEY=" + k + "\n", k, ""},
		{"inside a multi-line value", "CERT=\"-----BEGIN\nSYNTHIENT_API_KEY=nope\n-----END\"\nSYNTHIENT_API_KEY=" + k + "\n", k, ""},
		{"not set", "OTHER=x\n# SYNTHIENT_API_KEY=commented\n", "", ""},
		{"set empty, as a template", "SYNTHIENT_API_KEY=\n", "", ""},
		{"a variable of the file", "K=" + k + "\nSYNTHIENT_API_KEY=${K}\n", k, ""},
		{"a variable of the environment is not read", "SYNTHIENT_API_KEY=$HOME\n", "", ""},
		{"single quotes do not expand", "SYNTHIENT_API_KEY='$K'\n", "$K", ""},
		{"a file that does not mention it is not parsed", "this is not a .env file\n'", "", ""},
		{"an unclosed quote", "SYNTHIENT_API_KEY=\"" + k + "\n", "", ".env: not a .env file that can be read (a quoted value is not closed)"},
		{"a line that is not NAME=VALUE", "SYNTHIENT_API_KEY " + k + "\n", "", "a line is not NAME=VALUE"},
		{"two words", "SYNTHIENT_API_KEY=" + k + " extra\n", "", ".env: SYNTHIENT_API_KEY: more than one word"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), ".env")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o600))
			key, err := config.ReadDotEnv(path)
			if tt.err != "" {
				var fe *config.FileError
				require.ErrorAs(t, err, &fe, "ReadDotEnv = %v", err)
				assert.Contains(t, err.Error(), tt.err)
				assert.NotContains(t, err.Error(), k, "the error shows the value")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.key, key)
		})
	}
	key, err := config.ReadDotEnv(filepath.Join(t.TempDir(), ".env"))
	require.NoError(t, err, "no .env")
	assert.Empty(t, key)
}

// dotEnvErrorRe is every error of a .env that is a regular file: none
// shows its text.
var dotEnvErrorRe = regexp.MustCompile(`^(not a \.env file that can be read \((a quoted value is not closed|a line is not NAME=VALUE: [^()]*|it does not parse)\): ` +
	`the key SYNTHIENT_API_KEY it mentions cannot be taken from it|SYNTHIENT_API_KEY: more than one word \(white space or control characters\), not a single API key)$`)

// FuzzReadDotEnv: whatever a .env holds, ReadDotEnv never panics; a key
// it returns is one word, from a file that mentions the key; an error is
// a *FileError that shows none of the file's text.
func FuzzReadDotEnv(f *testing.F) {
	for _, s := range []string{"SYNTHIENT_API_KEY=abc\n", "export SYNTHIENT_API_KEY='x' # c\n", "A=\"\nSYNTHIENT_API_KEY=x\n\"", "=\n\x00", "SYNTHIENT_API_KEY=\"a\"b",
		"A=x\nSYNTHIENT_API_KEY=${A}${A}", "SYNTHIENT_API_KEY: \"a\\\"b\"", "SYNTHIENT_API_KEY=\"secretvalue"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "env")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		key, err := config.ReadDotEnv(path)
		if err != nil {
			var fe *config.FileError
			require.ErrorAs(t, err, &fe)
			assert.Regexp(t, dotEnvErrorRe, strings.TrimPrefix(err.Error(), path+": "), "an error that may show the file's text")
			return
		}
		if key == "" {
			return
		}
		assert.False(t, strings.ContainsAny(key, " \t\r\n"), "key %q is not one word", key)
		assert.Contains(t, text, "SYNTHIENT_API_KEY")
	})
}
