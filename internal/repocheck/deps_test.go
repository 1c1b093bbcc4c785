package repocheck_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRootLeavesOutParquet checks that package synthient does not build in
// the Parquet library, nor package exports, while package exports does:
// a program that only calls the API stays free of it.
func TestRootLeavesOutParquet(t *testing.T) {
	t.Parallel()
	deps := func(pkg string) []string {
		cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg) //nolint:gosec // the go tool on this module's packages
		cmd.Dir = moduleRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	parquet := func(path string) bool { return strings.Contains(path, "parquet") }

	root := deps("github.com/synthient-go/synthient")
	if !slices.Contains(root, "net/http") {
		t.Fatalf("go list -deps of the root package lists no net/http: the check is broken: %q", root)
	}
	for _, path := range root {
		if parquet(path) || path == "github.com/synthient-go/synthient/exports" {
			t.Errorf("package synthient builds in %s", path)
		}
	}
	if !slices.ContainsFunc(deps("github.com/synthient-go/synthient/exports"), parquet) {
		t.Error("package exports builds in no Parquet library: the check looks for the wrong name")
	}
}
