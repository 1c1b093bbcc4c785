package repocheck_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestInternalLeavesOutTheRoot checks, with go list, that no package under
// internal/ builds in package synthient: the engines there (the pacing
// model, say) are the root's, never the other way round. This package's
// own tests, which test the repository, may import it.
func TestInternalLeavesOutTheRoot(t *testing.T) {
	t.Parallel()
	const root = "github.com/synthient-go/synthient"
	cmd := exec.CommandContext(t.Context(), "go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./internal/...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./internal/...: %v", err)
	}
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkgs = append(pkgs, fields[0])
		if slices.Contains(fields[1:], root) {
			t.Errorf("%s builds in %s", fields[0], root)
		}
	}
	if !slices.Contains(pkgs, root+"/internal/pace") {
		t.Fatalf("go list ./internal/... lists no internal/pace: the check is broken: %q", pkgs)
	}
	if !slices.Contains(goListDeps(t, root), root+"/internal/pace") {
		t.Error("package synthient builds in no internal/pace: the check looks for the wrong name")
	}
}
