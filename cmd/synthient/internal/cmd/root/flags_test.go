package root_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/root"
)

// Shell completion offers the --output formats.
func TestOutputFlagCompletion(t *testing.T) {
	t.Parallel()
	r := clitest.Call{Args: []string{"__complete", "account", "--output", ""}}.Run(t)
	clitest.RequireCode(t, r, 0, "__complete")
	assert.Equal(t, "text\njson\ncsv\n:4\n", r.Stdout)
}

// A global flag that a command would ignore is refused (exit 2), not
// accepted silently: fake-server --api-key K does not serve K.
func TestUnusedGlobalFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fake-server", "--api-key", "mykey"}, "--api-key does not apply to fake-server"},
		{[]string{"--base-url", "https://example.com/api/v4", "demo"}, "--base-url does not apply to demo"},
		{[]string{"--fake", "demo"}, "--fake does not apply to demo"},
		{[]string{"-o", "json", "demo"}, "demo prints a narrated tour as text: --output json does not apply to it"},
		{[]string{"completion", "bash", "-v"}, "--verbose does not apply to completion"},
		{[]string{"version", "--timeout", "1s"}, "--timeout does not apply to version"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := clitest.Call{Args: tt.args}.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Equal(t, "synthient: "+tt.want+"\n", r.Stderr)
			assert.Empty(t, r.Stdout)
		})
	}
}

// A command's help lists none of the global flags it refuses, and the
// others still; the flags stay in the help of the other commands.
func TestHelpHidesUnusedFlags(t *testing.T) {
	t.Parallel()
	for cmd, refused := range root.UnusedFlags() {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			r := clitest.Call{Args: []string{cmd, "--help"}}.Run(t)
			clitest.RequireCode(t, r, clierr.OK, cmd)
			for _, name := range refused {
				assert.NotRegexp(t, `(?m)^\s+(-\w, )?--`+name+` `, r.Stdout, "%s --help lists --%s", cmd, name)
			}
			assert.Contains(t, r.Stdout, "--no-progress", "the flags it takes")
		})
	}
	r := clitest.Call{Args: []string{"account", "--help"}}.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	for _, name := range []string{"--api-key ", "--base-url ", "--fake ", "--timeout ", "--jq "} {
		assert.Contains(t, r.Stdout, name, "account --help")
	}
}

// --fake with an explicit --api-key is a usage error, not a key silently
// ignored.
func TestFakeWithAPIKey(t *testing.T) {
	t.Parallel()
	r := clitest.Call{Args: []string{"account", "--fake", "--api-key", "sk-conflicting"}}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "cannot be combined with --api-key", "stderr")
	assert.Empty(t, r.Stdout, "stdout")
}

// Without a key, every command that needs one exits 2 naming
// SYNTHIENT_API_KEY, and sends nothing.
func TestNoAPIKey(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	// After the parallel subtests, before the fake closes.
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent without a key") })
	envs := []struct {
		name string
		env  map[string]string
	}{
		{"no environment", nil},
		{"SYNTHIENT_BASE_URL only", map[string]string{"SYNTHIENT_BASE_URL": srv.URL}},
		{"SYNTHIENT_API_KEY empty", map[string]string{"SYNTHIENT_API_KEY": ""}},
	}
	for _, args := range [][]string{
		{"account"},
		{"lookup", "ip", "1.1.1.1"},
		{"lookup", "domain", "example.com"},
		{"lookup", "ips", "--file", "-"},
		{"exports", "list", "proxies"},
		{"exports", "meta", "proxies", "latest"},
		{"stream", "proxies", "--max-events", "1"},
	} {
		for _, e := range envs {
			t.Run(strings.Join(args, " ")+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				r := clitest.Call{Args: args, Env: e.env, Stdin: strings.NewReader("1.1.1.1\n")}.Run(t)
				clitest.RequireCode(t, r, clierr.Usage, args...)
				assert.Contains(t, r.Stderr, "SYNTHIENT_API_KEY", "stderr")
			})
		}
	}
}

// SYNTHIENT_BASE_URL and SYNTHIENT_API_KEY are read through getenv; the
// flags win over them.
func TestEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	env := map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": srv.URL}
	r := clitest.RunArgs(t, env, "account")
	clitest.RequireCode(t, r, 0)
	assert.Contains(t, r.Stdout, "Grace Hopper", "account through the environment")

	// --api-key over a wrong SYNTHIENT_API_KEY.
	env["SYNTHIENT_API_KEY"] = clitest.UnknownKey
	r = clitest.RunArgs(t, env, "--api-key", srv.APIKey, "account")
	clitest.RequireCode(t, r, 0)

	// --base-url over a SYNTHIENT_BASE_URL that leads nowhere.
	env = map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": closedURL(t)}
	r = clitest.RunArgs(t, env, "--base-url", srv.URL, "health")
	clitest.RequireCode(t, r, 0)
	assert.Equal(t, "ok\n", r.Stdout, "health")

	// health needs no key.
	r = clitest.RunArgs(t, nil, "--base-url", srv.URL, "health")
	clitest.RequireCode(t, r, 0)
}

// -v and --trace, asked for explicitly, print under --quiet too.
func TestQuietKeepsWhatIsAskedFor(t *testing.T) {
	t.Parallel()
	for flag, want := range map[string]string{"-v": "attempt 1/3 GET /account/me: 200", "--trace": "trace Account (standard): ok"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			r := clitest.Call{Args: []string{"-q", flag, "--fake", "account"}}.Run(t)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Contains(t, r.Stderr, want)
		})
	}
}
