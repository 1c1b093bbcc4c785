package auth_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/auth"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/synthienttest"
)

// home is a user's machine: a configuration directory and a keychain.
type home struct {
	srv      *synthienttest.Server
	dir      string // XDG_CONFIG_HOME
	keychain *clitest.Keychain
}

func newHome(t *testing.T, keychainErr error) *home {
	t.Helper()
	return &home{srv: clitest.NewServer(t), dir: t.TempDir(), keychain: &clitest.Keychain{Err: keychainErr}}
}

// store is h's store of keys.
func (h *home) store() *config.Store {
	return &config.Store{Keychain: h.keychain, Dir: filepath.Join(h.dir, "synthient")}
}

// call is args run at h, against its fake, without SYNTHIENT_API_KEY.
func (h *home) call(args ...string) clitest.Call {
	return clitest.Call{Args: append([]string{"--base-url", h.srv.URL}, args...),
		Env: map[string]string{"XDG_CONFIG_HOME": h.dir}, Keychain: h.keychain}
}

// auth login --with-token checks the key with the API and keeps it in
// the keychain; the next command finds it there; the key is never
// printed.
func TestLoginWithToken(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	c := h.call("auth", "login", "--with-token")
	c.Stdin = strings.NewReader(h.srv.APIKey + "\n")
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	host := strings.TrimSuffix(h.srv.URL, "/api/v4")
	assert.Equal(t, "synthient: logged in as Grace Hopper <grace@example.com> (Example Labs), profile default; the key is kept in the system keychain (service synthient), bound to "+host+"\n", r.Stderr)
	kept, where, err := h.store().Get("default")
	require.NoError(t, err)
	assert.True(t, where.Keychain)
	assert.Equal(t, config.Kept{Key: h.srv.APIKey, Host: host}, kept)
	assert.NoFileExists(t, filepath.Join(h.dir, "synthient", "credentials.toml"))

	r = h.call("account", "--jq", ".email").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "grace@example.com\n", r.Stdout)
	r = h.call("auth", "status").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "API key   set (not shown), from the system keychain (service synthient), profile default, bound to "+host+"\n")
	assert.NotContains(t, r.Stdout+r.Stderr, h.srv.APIKey)
}

// On a machine without a keychain the key goes to credentials.toml, mode
// 0600, which login and status name.
func TestLoginWithoutKeychain(t *testing.T) {
	t.Parallel()
	h := newHome(t, errors.New("no Secret Service on this host"))
	c := h.call("auth", "login", "--with-token")
	c.Stdin = strings.NewReader(h.srv.APIKey)
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	path := filepath.Join(h.dir, "synthient", "credentials.toml")
	assert.Contains(t, r.Stderr, "the key is kept in "+path+" (mode 0600): no system keychain here (no Secret Service on this host)")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	r = h.call("auth", "status").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "from "+path+", profile default")
}

// A key typed at the prompt, which does not echo it, is kept like one on
// stdin; without a terminal and without --with-token, login says how to
// give the key, and reads nothing.
func TestLoginPrompt(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	c := h.call("auth", "login")
	c.TTYIn, c.Password = true, []byte(h.srv.APIKey)
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.True(t, strings.HasPrefix(r.Stderr, "Paste your Synthient API key (it is not shown): \nsynthient: logged in as Grace Hopper"), "stderr: %q", r.Stderr)

	r = newHome(t, nil).call("auth", "login").Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "stdin is not one: give it on stdin with --with-token")
}

// A key the API refuses is not kept; one on stdin that is not a key is
// refused before anything is sent.
func TestLoginRefusedKey(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	c := h.call("auth", "login", "--with-token")
	c.Stdin = strings.NewReader(clitest.UnknownKey)
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "the key was not kept: checking it with the API: 401 Unauthorized")
	assert.NotContains(t, r.Stderr, clitest.UnknownKey)
	_, err := h.keychain.Get("synthient", "default")
	require.Error(t, err, "nothing kept")

	before := len(h.srv.Requests())
	c = h.call("auth", "login", "--with-token")
	c.Stdin = strings.NewReader("two words\n")
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "--with-token: stdin holds more than one word")
	assert.Len(t, h.srv.Requests(), before, "requests sent")
}

// Each profile has a key of its own; logout removes the profile's, and a
// second logout has nothing to remove.
func TestLogout(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	for _, p := range []string{"default", "staging"} {
		c := h.call("--profile", p, "auth", "login", "--with-token")
		c.Stdin = strings.NewReader(h.srv.APIKey)
		clitest.RequireCode(t, c.Run(t), clierr.OK)
	}
	r := h.call("--profile", "staging", "auth", "logout").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "synthient: logged out of profile staging: its key is removed from the system keychain (service synthient)\n", r.Stderr)
	r = h.call("--profile", "staging", "auth", "logout").Run(t)
	clitest.RequireCode(t, r, clierr.Failure)
	assert.Contains(t, r.Stderr, "no key stored for profile staging")
	_, err := h.keychain.Get("synthient", "default")
	require.NoError(t, err, "the default profile's key stays")
	r = h.call("--fake", "auth", "status").Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
}

// Ten logins for ten profiles at once, without a keychain, each keep
// their key: credentials.toml is read, changed and replaced under a
// lock. Before, all ten said the key was kept and the file held 4 to 9.
func TestConcurrentLogins(t *testing.T) {
	t.Parallel()
	h := newHome(t, errors.New("no Secret Service on this host"))
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = h.srv.AddKey(synthienttest.AllScopes(), 1) // each its own rate limit
	}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			c := h.call("--profile", fmt.Sprint("p", i), "auth", "login", "--with-token")
			c.Stdin = strings.NewReader(keys[i])
			r := c.Run(t)
			assert.Equal(t, clierr.OK, r.Code, "login p%d: %s", i, r.Stderr)
		})
	}
	wg.Wait()
	for i := range 10 {
		kept, _, err := h.store().Get(fmt.Sprint("p", i))
		require.NoError(t, err)
		assert.Equal(t, keys[i], kept.Key, "the key of profile p%d", i)
	}
}

// auth login takes the key that --api-key-file (or --api-key) gives,
// where it asked for one and ignored the flag; with --with-token too it
// is refused. Without a terminal, the hint keeps the profile.
func TestLoginKeyFlags(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	file := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(file, []byte(h.srv.APIKey+"\n"), 0o600))
	r := h.call("--profile", "file", "--api-key-file", file, "auth", "login").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	kept, _, err := h.store().Get("file")
	require.NoError(t, err)
	assert.Equal(t, h.srv.APIKey, kept.Key)

	c := h.call("--api-key-file", file, "auth", "login", "--with-token")
	c.Stdin = strings.NewReader(h.srv.APIKey)
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "--with-token and --api-key-file both give the key: give one")

	r = h.call("--profile", "slow", "auth", "login").Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "give it on stdin with --with-token (XDG_CONFIG_HOME="+h.dir+" synthient auth login --profile slow --base-url "+h.srv.URL+" --with-token < key.txt)")
}

// auth login parses its command line before any key is read (its runF
// seam): the host the key is bound to, from the base URL in use, and the
// global flag that gives the key; --with-token with a flag that gives the
// key too, and a base URL that is no URL, are usage errors.
func TestLoginParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		args      []string
		flags     cmdutil.GlobalFlags
		env       map[string]string
		host      string // the host parsed; else want, the error
		keyFlag   string
		withToken bool
		want      string
	}{
		{name: "the default host", host: config.DefaultHost},
		{name: "--with-token", args: []string{"--with-token"}, host: config.DefaultHost, withToken: true},
		{name: "--base-url", flags: cmdutil.GlobalFlags{BaseURL: "HTTP://127.0.0.1:8080/api/v4"}, host: "http://127.0.0.1:8080"},
		{name: "SYNTHIENT_BASE_URL", env: map[string]string{"SYNTHIENT_BASE_URL": "https://staging.example.com:443/api/v4"}, host: "https://staging.example.com"},
		{name: "--api-key-file", flags: cmdutil.GlobalFlags{APIKeyFile: "key.txt"}, host: config.DefaultHost, keyFlag: "--api-key-file"},
		{name: "--api-key", flags: cmdutil.GlobalFlags{APIKey: clitest.ConfiguredKey}, host: config.DefaultHost, keyFlag: "--api-key"},
		{name: "--with-token and --api-key-file", args: []string{"--with-token"}, flags: cmdutil.GlobalFlags{APIKeyFile: "key.txt"},
			want: "--with-token and --api-key-file both give the key: give one"},
		{name: "a base URL that is no URL", flags: cmdutil.GlobalFlags{BaseURL: "api.synthient.com"}, want: `the base URL "api.synthient.com" is not an absolute http or https URL`},
		{name: "an argument", args: []string{"default"}, want: `login takes no argument, not "default"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.Factory(iostreams.System{Getenv: func(k string) string { return tt.env[k] }})
			f.Flags = tt.flags
			var seam clitest.Seam[auth.LoginOptions]
			err := clitest.Parse(t, auth.NewCmdLogin(f, seam.RunF), tt.args...)
			if !seam.Parsed(t, err, tt.want) {
				return
			}
			got := seam.Got
			assert.Equal(t, tt.host, got.Host)
			assert.Equal(t, tt.keyFlag, got.KeyFlag)
			assert.Equal(t, tt.withToken, got.WithToken)
		})
	}
}

// A profile named token, by --profile or SYNTHIENT_PROFILE, is refused
// (exit 2) by every command: its keychain entry would be the official
// Synthient CLI's key, which auth login would replace and auth logout
// remove. Before, login replaced it.
func TestProfileNamedToken(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	require.NoError(t, h.keychain.Set("synthient", "token", "official-key"))
	const says = "synthient: profile token: the name is taken by the official Synthient CLI's key in the system keychain (service synthient, account token), " +
		"which the default profile reads: name the profile otherwise (in config.toml too) (from "
	for _, args := range [][]string{
		{"--profile", "token", "auth", "login", "--with-token"},
		{"--profile", "token", "auth", "logout"},
		{"--profile", "token", "auth", "status"},
		{"--profile", "token", "account"},
	} {
		c := h.call(args...)
		c.Stdin = strings.NewReader(h.srv.APIKey)
		r := c.Run(t)
		clitest.RequireCode(t, r, clierr.Usage, args...)
		assert.Equal(t, says+"--profile)\n", r.Stderr, "synthient %v", args)
	}
	c := h.call("auth", "login", "--with-token")
	c.Env["SYNTHIENT_PROFILE"] = "token"
	c.Stdin = strings.NewReader(h.srv.APIKey)
	clitest.RequireFails(t, c.Run(t), clierr.Usage, says+"SYNTHIENT_PROFILE)")
	v, err := h.keychain.Get("synthient", "token")
	require.NoError(t, err)
	assert.Equal(t, "official-key", v, "the official CLI's key")
	assert.Empty(t, h.srv.Requests(), "requests sent")
}

// The default profile, with no key of its own, takes the official
// Synthient CLI's key (keychain service synthient, account token), bound
// to the default API's host as the official CLI sends it: auth status and
// the error of a command on another host say so. Its own key, once
// logged in, comes first; logout removes that, and leaves the official
// CLI's.
func TestOfficialCLIKey(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	require.NoError(t, h.keychain.Set("synthient", "token", h.srv.APIKey))
	const from = "the official Synthient CLI's entry in the system keychain (service synthient, account token)"
	r := h.call("auth", "status").Run(t)
	clitest.RequireCode(t, r, clierr.Failure)
	assert.Contains(t, r.Stdout, "API key   not used, from "+from+", profile default, bound to https://api.synthient.com (the official Synthient CLI's key names no host): the base URL is on another host")
	r = h.call("account").Run(t)
	clitest.RequireFails(t, r, clierr.Usage, "synthient: the key kept for profile default is bound to https://api.synthient.com (the official Synthient CLI's key, which names no host: the default API's), and the base URL "+h.srv.URL)
	assert.Empty(t, h.srv.Requests(), "requests sent")

	c := h.call("auth", "login", "--with-token")
	c.Stdin = strings.NewReader(h.srv.APIKey)
	clitest.RequireCode(t, c.Run(t), clierr.OK)
	r = h.call("auth", "status").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "API key   set (not shown), from the system keychain (service synthient), profile default")

	r = h.call("auth", "logout").Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "synthient: logged out of profile default: its key is removed from the system keychain (service synthient); "+
		from+" still gives profile default a key: it is that CLI's, and stays\n", r.Stderr)
	r = h.call("auth", "logout").Run(t)
	clitest.RequireFails(t, r, clierr.Failure, "no key stored for profile default: nothing to log out of; "+from+" still gives")
	v, err := h.keychain.Get("synthient", "token")
	require.NoError(t, err)
	assert.Equal(t, h.srv.APIKey, v, "the official CLI's key")
}
