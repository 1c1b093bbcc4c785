package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// .env gives SYNTHIENT_API_KEY and nothing else: bare, quoted, after
// export, with comments; other lines, multi-line values included, are
// skipped; a line that sets it and cannot be read is a *FileError naming
// its line, never the value.
func TestReadDotEnv(t *testing.T) {
	t.Parallel()
	const k = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
	tests := []struct {
		name, text, key string
		line            int
		err             string
	}{
		{"bare", "SYNTHIENT_API_KEY=" + k + "\n", k, 1, ""},
		{"export and spaces", "# keys\n\nexport SYNTHIENT_API_KEY = " + k + "  # the team's\n", k, 3, ""},
		{"double quotes", `SYNTHIENT_API_KEY="` + k + `"` + "\r\n", k, 1, ""},
		{"single quotes", "OTHER=1\nSYNTHIENT_API_KEY='" + k + "'\n", k, 2, ""},
		{"the last wins", "SYNTHIENT_API_KEY=old\nSYNTHIENT_API_KEY=" + k + "\n", k, 2, ""},
		{"inside a multi-line value", "CERT=\"-----BEGIN\nSYNTHIENT_API_KEY=nope\n-----END\"\nSYNTHIENT_API_KEY=" + k + "\n", k, 4, ""},
		{"not set", "OTHER=x\n# SYNTHIENT_API_KEY=commented\n", "", 0, ""},
		{"an unclosed quote", "SYNTHIENT_API_KEY=\"" + k + "\n", "", 0, ".env:1: SYNTHIENT_API_KEY: the quote is not closed on its line"},
		{"two words", "SYNTHIENT_API_KEY=" + k + " extra\n", "", 0, ".env:1: SYNTHIENT_API_KEY: more than one word"},
		{"text after the quote", "SYNTHIENT_API_KEY=\"" + k + "\"x\n", "", 0, "text after the closing quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), ".env")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o600))
			key, line, err := config.ReadDotEnv(path)
			if tt.err != "" {
				var fe *config.FileError
				require.ErrorAs(t, err, &fe, "ReadDotEnv = %v", err)
				assert.Contains(t, err.Error(), tt.err)
				assert.NotContains(t, err.Error(), k, "the error shows the value")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.key, key)
			assert.Equal(t, tt.line, line)
		})
	}
	key, _, err := config.ReadDotEnv(filepath.Join(t.TempDir(), ".env"))
	require.NoError(t, err, "no .env")
	assert.Empty(t, key)
}

// FuzzReadDotEnv: whatever a .env holds, ReadDotEnv never panics, and a
// key it returns is one word, the value of a line that sets it.
func FuzzReadDotEnv(f *testing.F) {
	for _, s := range []string{"SYNTHIENT_API_KEY=abc\n", "export SYNTHIENT_API_KEY='x' # c\n", "A=\"\nSYNTHIENT_API_KEY=x\n\"", "=\n\x00", "SYNTHIENT_API_KEY=\"a\"b"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "env")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		key, line, err := config.ReadDotEnv(path)
		if err != nil {
			var fe *config.FileError
			require.ErrorAs(t, err, &fe)
			return
		}
		if key == "" {
			return
		}
		assert.False(t, strings.ContainsAny(key, " \t\r\n"), "key %q is not one word", key)
		lines := strings.Split(text, "\n")
		require.GreaterOrEqual(t, len(lines), line)
		assert.Contains(t, lines[line-1], "SYNTHIENT_API_KEY")
		assert.Contains(t, lines[line-1], key)
	})
}
