package cmdutil_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of settings.go: where the key and the settings come from.

// The key comes from the first of: a flag, SYNTHIENT_API_KEY, .env, the
// profile's stored key. Each source here has a key of its own, told apart
// by its credits.
func TestKeyPrecedence(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	stored, dotenv, env, flag := srv.AddKey(synthienttest.AllScopes(), 1), srv.AddKey(synthienttest.AllScopes(), 2),
		srv.AddKey(synthienttest.AllScopes(), 3), srv.AddKey(synthienttest.AllScopes(), 4)
	keychain := &clitest.Keychain{}
	host, err := config.HostOf(srv.URL)
	require.NoError(t, err)
	_, _, err = (&config.Store{Keychain: keychain}).Set("default", config.Kept{Key: stored, Host: host})
	require.NoError(t, err)
	withDotEnv := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(withDotEnv, ".env"), []byte("OTHER=1\nSYNTHIENT_API_KEY="+dotenv+"\n"), 0o600))
	tests := []struct {
		name    string
		flags   []string
		env     string
		dir     string
		credits string
	}{
		{"a flag first", []string{"--api-key", flag}, env, withDotEnv, "4"},
		{"then the environment", nil, env, withDotEnv, "3"},
		{"then .env", nil, "", withDotEnv, "2"},
		{"then the keychain", nil, "", "", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := clitest.Call{Args: append(append([]string{"--base-url", srv.URL}, tt.flags...), "account", "--jq", ".lookup_quota.credits"),
				Env: map[string]string{"SYNTHIENT_API_KEY": tt.env, "XDG_CONFIG_HOME": t.TempDir()}, Keychain: keychain, Dir: tt.dir}
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK, c.Args...)
			assert.Equal(t, tt.credits+"\n", r.Stdout)
		})
	}
}

// A .env that mentions the key and cannot be read is a usage error naming
// it, never the key.
func TestDotEnvRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("SYNTHIENT_API_KEY=\""+clitest.PastedKey+"\n"), 0o600))
	r := clitest.Call{Args: []string{"account"}, Dir: dir}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Equal(t, "synthient: "+filepath.Join(dir, ".env")+": not a .env file that can be read (a quoted value is not closed): the key SYNTHIENT_API_KEY it mentions cannot be taken from it\n", r.Stderr)
}

// A profile of config.toml gives the base URL, timeouts and retries where
// no flag or environment variable does; --profile and SYNTHIENT_PROFILE
// pick it; a profile named and found nowhere is refused.
func TestProfiles(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "synthient"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, "synthient", "config.toml"), []byte(
		"[profiles.default]\nbase_url = \""+srv.URL+"\"\n\n"+
			"[profiles.once]\nbase_url = \""+srv.URL+"\"\nmax_retries = 0\n\n"+
			"[profiles.elsewhere]\nbase_url = \"http://127.0.0.1:1/api/v4\"\n"), 0o600))
	run := func(env map[string]string, args ...string) clitest.Result {
		t.Helper()
		e := map[string]string{"XDG_CONFIG_HOME": home, "SYNTHIENT_API_KEY": srv.APIKey}
		for k, v := range env {
			e[k] = v
		}
		return clitest.Call{Args: args, Env: e}.Run(t)
	}
	clitest.RequireCode(t, run(nil, "health"), clierr.OK)
	clitest.RequireCode(t, run(nil, "--profile", "elsewhere", "health"), clierr.Connection)
	clitest.RequireCode(t, run(map[string]string{"SYNTHIENT_PROFILE": "elsewhere"}, "health"), clierr.Connection)
	clitest.RequireCode(t, run(map[string]string{"SYNTHIENT_PROFILE": "elsewhere", "SYNTHIENT_BASE_URL": srv.URL}, "health"), clierr.OK)
	clitest.RequireCode(t, run(nil, "--profile", "elsewhere", "--base-url", srv.URL, "health"), clierr.OK)

	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	r := run(nil, "--profile", "once", "account")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "1 attempt(s)", "max_retries = 0 of the profile")
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	clitest.RequireCode(t, run(nil, "--profile", "once", "--max-retries", "1", "account"), clierr.OK)

	r = run(nil, "--profile", "nowhere", "account")
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "profile nowhere (from --profile): not in "+filepath.Join(home, "synthient", "config.toml")+", and no key stored for it")

	require.NoError(t, os.WriteFile(filepath.Join(home, "synthient", "config.toml"), []byte("[profiles.default]\nbase_url = 1\n"), 0o600))
	r = run(nil, "account")
	clitest.RequireCode(t, r, clierr.Usage)
	assert.True(t, strings.HasPrefix(r.Stderr, "synthient: "+filepath.Join(home, "synthient", "config.toml")), "a config.toml that cannot be used: %s", r.Stderr)
	clitest.RequireCode(t, run(nil, "version"), clierr.OK) // a command that calls nothing does not read it
}

// The official Synthient CLI's config.toml is read for what has a
// meaning here: [endpoints] base_api, top-level or a profile's, is the
// base URL; its other keys (base_feeds, base_grpc) and sections are not
// read, and auth status names them; a misspelt key of ours is refused
// with the key it likely meant. Before, every command, auth status
// included, exited 2 (unknown key endpoints).
func TestOfficialConfig(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	home := t.TempDir()
	cfg := filepath.Join(home, "synthient", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte("[endpoints]\nbase_api = \""+srv.URL+"\"\nbase_feeds = \"https://feeds.synthient.com/v3\"\nbase_grpc = \"grpc.synthient.com:443\"\n\n"+
		"[profiles.eu.endpoints]\nbase_api = \"http://127.0.0.1:1/api/v4\"\n"), 0o600))
	run := func(args ...string) clitest.Result {
		t.Helper()
		return clitest.Call{Args: args, Env: map[string]string{"XDG_CONFIG_HOME": home, "SYNTHIENT_API_KEY": srv.APIKey}}.Run(t)
	}
	r := run("account", "--jq", ".email")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "grace@example.com\n", r.Stdout)
	r = run("auth", "status")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "Config    "+cfg+" (profiles: eu); not read here: endpoints.base_feeds, endpoints.base_grpc\n")
	assert.Contains(t, r.Stdout, "Base URL  "+srv.URL+" (from config.toml [endpoints] base_api)\n")
	r = run("--profile", "eu", "auth", "status")
	assert.Contains(t, r.Stdout, "Base URL  http://127.0.0.1:1/api/v4 (from profile eu (endpoints.base_api))\n")
	clitest.RequireCode(t, r, clierr.Connection)

	require.NoError(t, os.WriteFile(cfg, []byte("[endpoints]\nbase_api = \""+srv.URL+"\"\n\n[profiles.default]\nmax_retires = 1\n"), 0o600))
	r = run("account")
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Equal(t, "synthient: "+cfg+": unknown key profiles.default.max_retires: did you mean max_retries? (a profile's keys are base_url, timeout, open_timeout, max_retries)\n", r.Stderr)
}

// Each hint that names auth login keeps what chose where the key is
// looked for: the profile (--profile or SYNTHIENT_PROFILE), the base URL
// a flag or the environment gave (the key is bound to its host), and
// XDG_CONFIG_HOME when it moves the configuration directory; pasted, the
// command keeps a key where the command that printed it finds it.
// Before, every hint said 'synthient auth login'.
func TestLoginCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		// hint is the command printed, with SRV for srv.URL and XDG for
		// the moved configuration directory.
		hint string
	}{
		{"the default", nil, nil, "synthient auth login"},
		{"--profile", []string{"--profile", "slow"}, nil, "synthient auth login --profile slow"},
		{"SYNTHIENT_PROFILE", nil, map[string]string{"SYNTHIENT_PROFILE": "slow"}, "synthient auth login --profile slow"},
		{"--base-url", []string{"--profile", "slow", "--base-url", "{srv}"}, nil, "synthient auth login --profile slow --base-url {srv}"},
		{"SYNTHIENT_BASE_URL", nil, map[string]string{"SYNTHIENT_BASE_URL": "{srv}"}, "synthient auth login --base-url {srv}"},
		{"XDG_CONFIG_HOME", []string{"--profile", "slow"}, map[string]string{"XDG_CONFIG_HOME": "{xdg}"}, "XDG_CONFIG_HOME={xdg} synthient auth login --profile slow"},
		{"a name to quote", []string{"--profile", "my slow"}, nil, "synthient auth login --profile 'my slow'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t) // of its own: the fake limits the rate of each key
			home := t.TempDir()
			xdg := filepath.Join(home, "elsewhere")
			vars := strings.NewReplacer("{srv}", srv.URL, "{xdg}", xdg)
			// The profile is in config.toml of either directory, so that
			// it is not refused as unknown.
			for _, dir := range []string{filepath.Join(home, ".config", "synthient"), filepath.Join(xdg, "synthient")} {
				require.NoError(t, os.MkdirAll(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[profiles.slow]\n[profiles.\"my slow\"]\n"), 0o600))
			}
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = vars.Replace(v)
			}
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = vars.Replace(a)
			}
			keychain := &clitest.Keychain{}
			hint := vars.Replace(tt.hint)
			r := clitest.Call{Args: append(args, "auth", "status"), Env: env, Keychain: keychain}.Run(t)
			clitest.RequireCode(t, r, clierr.Failure)
			assert.Contains(t, r.Stdout, "API key   none: run '"+hint+"'\n")
			assert.Equal(t, "synthient: not logged in: run '"+hint+"' (or set SYNTHIENT_API_KEY)\n", r.Stderr)
			r = clitest.Call{Args: append(args, "account"), Env: env, Keychain: keychain}.Run(t)
			clitest.RequireCode(t, r, clierr.Usage)
			assert.Contains(t, r.Stderr, "no API key: run '"+hint+"', ")
			if strings.Contains(hint, "'") {
				return // quoted for a shell: pasted below only when it splits on spaces
			}
			if !strings.Contains(hint, "--base-url") {
				hint += " --base-url " + srv.URL // the key is checked with srv; the command below then goes elsewhere
				args = append(args, "--base-url", srv.URL)
			}
			r = paste(t, hint, env, keychain, srv.APIKey)
			clitest.RequireCode(t, r, clierr.OK)
			r = clitest.Call{Args: append(args, "account", "--jq", ".email"), Env: env, Keychain: keychain}.Run(t)
			clitest.RequireCode(t, r, clierr.OK, args...)
			assert.Equal(t, "grace@example.com\n", r.Stdout)
		})
	}
}

// paste runs the auth login command line hint, as a shell would split
// it (words without quotes, VAR=value before the command), with key on
// stdin (--with-token), in the environment env.
func paste(t *testing.T, hint string, env map[string]string, keychain config.Keychain, key string) clitest.Result {
	t.Helper()
	words := strings.Fields(hint)
	e := map[string]string{}
	for k, v := range env {
		e[k] = v
	}
	for len(words) > 0 && strings.Contains(words[0], "=") {
		k, v, _ := strings.Cut(words[0], "=")
		e[k], words = v, words[1:]
	}
	require.Equal(t, "synthient", words[0])
	return clitest.Call{Args: append(words[1:], "--with-token"), Env: e, Keychain: keychain, Stdin: strings.NewReader(key)}.Run(t)
}

// A key auth login kept is bound to the host it was checked with, as gh
// binds a token to its host: a base URL on another host (--base-url,
// SYNTHIENT_BASE_URL, the profile's base_url edited) does not get it,
// and the error says why and what to run, which works when pasted; a key
// given explicitly (--api-key, SYNTHIENT_API_KEY) goes where the user
// says. In the keychain and in credentials.toml alike. Before, the kept
// key went to any host the base URL named.
func TestKeptKeyBoundToHost(t *testing.T) {
	t.Parallel()
	for _, keychainErr := range []error{nil, errors.New("no keychain")} {
		t.Run(fmt.Sprint("keychain error ", keychainErr), func(t *testing.T) {
			t.Parallel()
			logged, other := clitest.NewServer(t), clitest.NewServer(t)
			home := t.TempDir()
			cfg := filepath.Join(home, "synthient", "config.toml")
			require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
			require.NoError(t, os.WriteFile(cfg, []byte("[profiles.slow]\nbase_url = \""+logged.URL+"\"\n"), 0o600))
			keychain := &clitest.Keychain{Err: keychainErr}
			call := func(env map[string]string, args ...string) clitest.Call {
				e := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home}
				for k, v := range env {
					e[k] = v
				}
				return clitest.Call{Args: append([]string{"--profile", "slow"}, args...), Env: e, Keychain: keychain}
			}
			login := call(nil, "auth", "login", "--with-token")
			login.Stdin = strings.NewReader(logged.APIKey)
			clitest.RequireCode(t, login.Run(t), clierr.OK)
			r := call(nil, "account", "--jq", ".email").Run(t)
			clitest.RequireCode(t, r, clierr.OK)

			loggedHost, otherHost := strings.TrimSuffix(logged.URL, "/api/v4"), strings.TrimSuffix(other.URL, "/api/v4")
			refused := func(from, run string) string {
				return "synthient: the key kept for profile slow is bound to " + loggedHost + ", and the base URL " + other.URL + " (from " + from + ") is on " + otherHost +
					": it is not sent there (run '" + run + "' to keep a key for that host, or give one with --api-key-file or SYNTHIENT_API_KEY)\n"
			}
			withBase := "XDG_CONFIG_HOME=" + home + " synthient auth login --profile slow --base-url " + other.URL
			r = call(nil, "--base-url", other.URL, "account").Run(t)
			clitest.RequireCode(t, r, clierr.Usage)
			assert.Equal(t, refused("--base-url", withBase), r.Stderr)
			r = call(map[string]string{"SYNTHIENT_BASE_URL": other.URL}, "account").Run(t)
			clitest.RequireCode(t, r, clierr.Usage)
			assert.Equal(t, refused("SYNTHIENT_BASE_URL", withBase), r.Stderr)
			r = call(nil, "--base-url", other.URL, "auth", "status").Run(t)
			clitest.RequireCode(t, r, clierr.Failure)
			assert.Contains(t, r.Stdout, "API key   not used, from ")
			assert.Contains(t, r.Stdout, ", profile slow, bound to "+loggedHost+": the base URL is on another host ("+withBase+" keeps a key for it)\n")

			assert.Empty(t, other.Requests(), "requests sent to the other host")

			// A key given explicitly goes where the user says.
			otherKey := other.AddKey(synthienttest.AllScopes(), 7)
			r = call(nil, "--base-url", other.URL, "--api-key", otherKey, "account", "--jq", ".lookup_quota.credits").Run(t)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Equal(t, "7\n", r.Stdout)
			r = call(map[string]string{"SYNTHIENT_BASE_URL": other.URL, "SYNTHIENT_API_KEY": otherKey}, "account", "--jq", ".lookup_quota.credits").Run(t)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Equal(t, "7\n", r.Stdout)

			require.NoError(t, os.WriteFile(cfg, []byte("[profiles.slow]\nbase_url = \""+other.URL+"\"\n"), 0o600))
			r = call(nil, "account").Run(t)
			clitest.RequireCode(t, r, clierr.Usage)
			edited := "XDG_CONFIG_HOME=" + home + " synthient auth login --profile slow"
			assert.Equal(t, refused("profile slow", edited), r.Stderr)
			clitest.RequireCode(t, paste(t, edited, map[string]string{"HOME": home}, keychain, otherKey), clierr.OK)
			r = call(nil, "account", "--jq", ".lookup_quota.credits").Run(t)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Equal(t, "7\n", r.Stdout, "the key kept for the other host")
		})
	}
}

// A key kept before keys were bound to a host (in the keychain as a bare
// key, or in credentials.toml without a host) is bound to the default
// API's host, and the error says so.
func TestKeptKeyWithoutHost(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	keychain := &clitest.Keychain{}
	require.NoError(t, keychain.Set("synthient", "default", srv.APIKey))
	r := clitest.Call{Args: []string{"--base-url", srv.URL, "account"}, Env: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, Keychain: keychain}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "synthient: the key kept for profile default is bound to https://api.synthient.com (kept before keys were bound to a host: the default API's), and the base URL "+srv.URL)
	assert.Empty(t, srv.Requests(), "requests sent")
}
