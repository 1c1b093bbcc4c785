package main

// Tests of version.go: `synthient version` and --version.

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// version and --version print the same line: the SDK's version and the Go
// version that built the binary; -o json gives the fields. Neither needs a
// key.
func TestVersion(t *testing.T) {
	t.Parallel()
	cmd := call{args: []string{"version"}}.run(t)
	requireCode(t, cmd, 0, "version")
	flag := call{args: []string{"--version"}}.run(t)
	requireCode(t, flag, 0, "--version")
	assert.Equal(t, cmd.stdout, flag.stdout, "version and --version agree")
	assert.Contains(t, cmd.stdout, "synthient "+synthient.Version+" (")
	assert.Contains(t, cmd.stdout, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")\n")

	for _, args := range [][]string{{"version", "-o", "json"}, {"--version", "-o", "json"}, {"-o", "json", "--version"}} {
		js := call{args: args}.run(t)
		requireCode(t, js, 0, args...)
		var b buildInfo
		require.NoError(t, json.Unmarshal([]byte(js.stdout), &b), js.stdout)
		assert.Equal(t, synthient.Version, b.Version)
		assert.Equal(t, runtime.Version(), b.Go)
	}
	fake := call{args: []string{"--version", "--fake"}}.run(t)
	requireCode(t, fake, exitUsage, "--version --fake")
	assert.Equal(t, "synthient: --fake does not apply to --version\n", fake.stderr)
	jq := call{args: []string{"--version", "--jq", ".version"}}.run(t)
	requireCode(t, jq, 0, "--version --jq .version")
	assert.Equal(t, synthient.Version+"\n", jq.stdout)
}

func TestBuildInfoString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		b    buildInfo
		want string
	}{
		{"no build info", buildInfo{Version: "0.1.0", Go: "go1.26.8", Platform: "linux/amd64"},
			"synthient 0.1.0 (go1.26.8 linux/amd64)"},
		{"go install of a release", buildInfo{Version: "0.1.0", ModuleVersion: "v0.1.0", Go: "go1.26.8", Platform: "darwin/arm64"},
			"synthient 0.1.0 (module v0.1.0; go1.26.8 darwin/arm64)"},
		{"a checkout with changes", buildInfo{Version: "0.1.0", ModuleVersion: "(devel)", Revision: "821eca984dfe513267861b66341a55d5f08eddf1",
			Time: "2026-12-01T18:29:58Z", Modified: true, Go: "go1.26.8", Platform: "linux/amd64"},
			"synthient 0.1.0 (module (devel), commit 821eca984dfe, 2026-12-01T18:29:58Z, modified; go1.26.8 linux/amd64)"},
		{"a short revision", buildInfo{Version: "0.1.0", Revision: "abc", Go: "go1.26.8", Platform: "linux/amd64"},
			"synthient 0.1.0 (commit abc; go1.26.8 linux/amd64)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.b.String())
		})
	}
}
