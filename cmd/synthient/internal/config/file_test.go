package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// Dir is $XDG_CONFIG_HOME/synthient, else ~/.config/synthient.
func TestDir(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/synthient"},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/synthient"},
		{map[string]string{"HOME": "/h"}, "/h/.config/synthient"},
		{nil, ""},
	} {
		assert.Equal(t, tt.want, config.Dir(func(k string) string { return tt.env[k] }), "%v", tt.env)
	}
}

// config.toml: profiles with a base URL, timeouts and retries; a missing
// file is empty; a file that cannot be used is a *FileError that names
// the line or the key.
func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		check      func(t *testing.T, f *config.File, err error)
	}{
		{"profiles", "[profiles.default]\nbase_url = \"https://a.example/api/v4\"\n\n[profiles.staging]\nbase_url = \"https://s.example/api/v4\"\ntimeout = \"10s\"\nopen_timeout = \"2s\"\nmax_retries = 0\n",
			func(t *testing.T, f *config.File, err error) {
				require.NoError(t, err)
				assert.True(t, f.Exists)
				assert.Equal(t, []string{"default", "staging"}, f.Names())
				s := f.Profiles["staging"]
				assert.Equal(t, "https://s.example/api/v4", s.BaseURL)
				assert.Equal(t, 10*time.Second, s.Timeout.Duration)
				assert.Equal(t, 2*time.Second, s.OpenTimeout.Duration)
				assert.Equal(t, 0, *s.MaxRetries)
				assert.Nil(t, f.Profiles["default"].Timeout)
			}},
		{"a typo", "[profiles.default]\nbase_ulr = \"x\"\n", fileError("unknown key profiles.default.base_ulr")},
		{"not TOML", "[profiles.default]\nbase_url = \n", fileError("config.toml:2: ")},
		{"a bad duration", "[profiles.p]\ntimeout = \"soon\"\n", fileError(`"soon" is not a duration`)},
		{"a negative duration", "[profiles.p]\ntimeout = \"-1s\"\n", fileError("is not positive")},
		{"too many retries", "[profiles.p]\nmax_retries = 17\n", fileError("profile p: max_retries must be 0 to 16, not 17")},
		{"a wrong type", "[profiles.p]\nmax_retries = \"two\"\n", fileError("config.toml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(tt.text), 0o600))
			f, err := config.Load(dir)
			tt.check(t, f, err)
		})
	}
	f, err := config.Load(t.TempDir())
	require.NoError(t, err)
	assert.False(t, f.Exists, "a missing file")
	assert.Empty(t, f.Profiles)
}

func fileError(want string) func(t *testing.T, f *config.File, err error) {
	return func(t *testing.T, _ *config.File, err error) {
		t.Helper()
		var fe *config.FileError
		require.ErrorAs(t, err, &fe, "Load = %v, want a *FileError", err)
		assert.Contains(t, err.Error(), want)
	}
}
