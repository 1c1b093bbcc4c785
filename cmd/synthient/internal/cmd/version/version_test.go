package version_test

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/version"
)

// Tests of version.go: `synthient version` and --version.

// version and --version print the same line: the SDK's version and the Go
// version that built the binary; -o json gives the fields. Neither needs a
// key.
func TestVersion(t *testing.T) {
	t.Parallel()
	cmd := clitest.Call{Args: []string{"version"}}.Run(t)
	clitest.RequireCode(t, cmd, 0, "version")
	flag := clitest.Call{Args: []string{"--version"}}.Run(t)
	clitest.RequireCode(t, flag, 0, "--version")
	assert.Equal(t, cmd.Stdout, flag.Stdout, "version and --version agree")
	assert.Contains(t, cmd.Stdout, "synthient "+synthient.Version+" (")
	assert.Contains(t, cmd.Stdout, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")\n")

	for _, args := range [][]string{{"version", "-o", "json"}, {"--version", "-o", "json"}, {"-o", "json", "--version"}} {
		js := clitest.Call{Args: args}.Run(t)
		clitest.RequireCode(t, js, 0, args...)
		var b version.BuildInfo
		require.NoError(t, json.Unmarshal([]byte(js.Stdout), &b), js.Stdout)
		assert.Equal(t, synthient.Version, b.Version)
		assert.Equal(t, runtime.Version(), b.Go)
	}
	fake := clitest.Call{Args: []string{"--version", "--fake"}}.Run(t)
	clitest.RequireCode(t, fake, clierr.Usage, "--version --fake")
	assert.Equal(t, "synthient: --fake does not apply to --version\n", fake.Stderr)
	jq := clitest.Call{Args: []string{"--version", "--jq", ".version"}}.Run(t)
	clitest.RequireCode(t, jq, 0, "--version --jq .version")
	assert.Equal(t, synthient.Version+"\n", jq.Stdout)
}

func TestBuildInfoString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		b    version.BuildInfo
		want string
	}{
		{"no build info", version.BuildInfo{Version: "0.1.0", Go: "go1.26.8", Platform: "linux/amd64"},
			"synthient 0.1.0 (go1.26.8 linux/amd64)"},
		{"go install of a release", version.BuildInfo{Version: "0.1.0", ModuleVersion: "v0.1.0", Go: "go1.26.8", Platform: "darwin/arm64"},
			"synthient 0.1.0 (module v0.1.0; go1.26.8 darwin/arm64)"},
		{"a checkout with changes", version.BuildInfo{Version: "0.1.0", ModuleVersion: "(devel)", Revision: "821eca984dfe513267861b66341a55d5f08eddf1",
			Time: "2026-12-01T18:29:58Z", Modified: true, Go: "go1.26.8", Platform: "linux/amd64"},
			"synthient 0.1.0 (module (devel), commit 821eca984dfe, 2026-12-01T18:29:58Z, modified; go1.26.8 linux/amd64)"},
		{"a short revision", version.BuildInfo{Version: "0.1.0", Revision: "abc", Go: "go1.26.8", Platform: "linux/amd64"},
			"synthient 0.1.0 (commit abc; go1.26.8 linux/amd64)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.b.String())
		})
	}
}
