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
		{"a typo", "[profiles.default]\nbase_ulr = \"x\"\n", fileError("unknown key profiles.default.base_ulr: did you mean base_url? (a profile's keys are base_url, timeout, open_timeout, max_retries)")},
		{"the official CLI's name in a profile", "[profiles.default]\nbase_api = \"x\"\n", fileError("unknown key profiles.default.base_api: did you mean base_url? (or endpoints.base_api, as the official CLI writes it)")},
		{"a part of a name", "[profiles.p]\nretries = 1\n", fileError("unknown key profiles.p.retries: did you mean max_retries?")},
		{"far from any", "[profiles.p]\ncolour = true\n", fileError("unknown key profiles.p.colour (a profile's")},
		{"a misspelt profiles", "[profile.staging]\nbase_url = \"x\"\n", fileError("unknown section profile: did you mean profiles?")},
		{"a key of a profile outside one", "base_url = \"x\"\n", fileError("base_url is a key of a profile: put it in a [profiles.NAME] section")},
		{"the official CLI's file", "[endpoints]\nbase_api = \"https://o.example/api/v4\"\nbase_feeds = \"https://feeds.example/v3\"\nbase_grpc = \"grpc.example:443\"\n\n" +
			"[profiles.eu.endpoints]\nbase_api = \"https://eu.example/api/v4\"\nbase_grpc = \"x\"\n\n[profiles.both]\nbase_url = \"https://ours.example/api/v4\"\n[profiles.both.endpoints]\nbase_api = \"https://theirs.example/api/v4\"\n\n[telemetry]\nenabled = false\n",
			func(t *testing.T, f *config.File, err error) {
				require.NoError(t, err)
				for _, tt := range []struct{ profile, url, from string }{
					{"default", "https://o.example/api/v4", "config.toml [endpoints] base_api"},
					{"eu", "https://eu.example/api/v4", "profile eu (endpoints.base_api)"},
					{"both", "https://ours.example/api/v4", "profile both"},
				} {
					url, from := f.BaseURL(tt.profile)
					assert.Equal(t, tt.url, url, tt.profile)
					assert.Equal(t, tt.from, from, tt.profile)
				}
				assert.Equal(t, []string{"endpoints.base_feeds", "endpoints.base_grpc", "profiles.eu.endpoints.base_grpc", "telemetry.enabled"}, f.Ignored)
			}},
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

// FuzzLoad: whatever config.toml holds, Load never panics, and an error
// is a *FileError.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{"[profiles.a]\nbase_url = \"x\"\n", "[endpoints]\nbase_api = \"x\"\n[profiles.b.endpoints]\nbase_grpc = 1\n",
		"profile.x.y.z = 1\n", "[profiles.a]\nbase_ulr = 1\n[profiles.a.endpoints.deep]\nx = 2\n", "base_url = 1\nendpoint = 2\n", "[[profiles]]\n"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600))
		_, err := config.Load(dir)
		if err != nil {
			var fe *config.FileError
			require.ErrorAs(t, err, &fe)
		}
	})
}
