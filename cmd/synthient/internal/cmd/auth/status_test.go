package auth_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// auth status names the profile, config.toml, the base URL and where the
// key comes from, and says whether the key works: exit 0, 1 without a
// key, 3 when the API refuses it.
func TestStatus(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(h.dir, "synthient"), 0o700))
	cfg := filepath.Join(h.dir, "synthient", "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[profiles.staging]\nbase_url = \""+h.srv.URL+"\"\n"), 0o600))

	r := clitest.Call{Args: []string{"auth", "status"}, Env: map[string]string{"XDG_CONFIG_HOME": h.dir}, Keychain: h.keychain}.Run(t)
	clitest.RequireCode(t, r, clierr.Failure)
	assert.Equal(t, "Profile   default (built in)\n"+
		"Config    "+cfg+" (profiles: staging)\n"+
		"Base URL  https://api.synthient.com/api/v4 (built in)\n"+
		"API key   none: run 'XDG_CONFIG_HOME="+h.dir+" synthient auth login'\n", r.Stdout)
	assert.Equal(t, "synthient: not logged in: run 'XDG_CONFIG_HOME="+h.dir+" synthient auth login' (or set SYNTHIENT_API_KEY)\n", r.Stderr)

	env := map[string]string{"XDG_CONFIG_HOME": h.dir, "SYNTHIENT_PROFILE": "staging", "SYNTHIENT_API_KEY": h.srv.APIKey}
	r = clitest.Call{Args: []string{"-o", "json", "auth", "status"}, Env: env, Keychain: h.keychain}.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &st))
	assert.Equal(t, "staging", st["profile"])
	assert.Equal(t, "SYNTHIENT_PROFILE", st["profile_from"])
	assert.Equal(t, h.srv.URL, st["base_url"])
	assert.Equal(t, "profile staging", st["base_url_from"])
	assert.Equal(t, "SYNTHIENT_API_KEY", st["key_from"])
	assert.Equal(t, "grace@example.com", st["account"].(map[string]any)["email"])
	assert.NotContains(t, r.Stdout, h.srv.APIKey)

	env["SYNTHIENT_API_KEY"] = clitest.UnknownKey
	r = clitest.Call{Args: []string{"auth", "status"}, Env: env, Keychain: h.keychain}.Run(t)
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stdout, "Account   the check failed: 401 Unauthorized")
	assert.NotContains(t, r.Stdout+r.Stderr, clitest.UnknownKey)
}
