package repocheck_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// goListDeps returns the packages that pkg's non-test files build in, as
// go list -deps lists them.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg) //nolint:gosec // the go tool on this module's packages
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestRootLeavesOutParquet checks that package synthient does not build in
// the Parquet library, nor package exports, while package exports does:
// a program that only calls the API stays free of it.
func TestRootLeavesOutParquet(t *testing.T) {
	t.Parallel()
	deps := func(pkg string) []string { return goListDeps(t, pkg) }
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

// TestRetryLeavesOutRetryablehttp checks that package retry, the retry
// policy, builds in no HTTP client library: the adapter to
// go-retryablehttp is package retryhttp, which does.
func TestRetryLeavesOutRetryablehttp(t *testing.T) {
	t.Parallel()
	const lib = "github.com/hashicorp/go-retryablehttp"
	deps := goListDeps(t, "github.com/synthient-go/synthient/retry")
	if !slices.Contains(deps, "net/http") {
		t.Fatalf("go list -deps of package retry lists no net/http: the check is broken: %q", deps)
	}
	if slices.Contains(deps, lib) {
		t.Errorf("package retry builds in %s; its adapter belongs in package retryhttp", lib)
	}
	if !slices.Contains(goListDeps(t, "github.com/synthient-go/synthient/retry/retryhttp"), lib) {
		t.Errorf("package retryhttp builds in no %s: the check looks for the wrong name", lib)
	}
}
