package repocheck_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCIRunsTheReadmeTests checks that .ci/run runs the README's test
// command: the same command, perhaps with more flags.
func TestCIRunsTheReadmeTests(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md")) //nolint:gosec // a file of this repository
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run")) //nolint:gosec // a file of this repository
	if err != nil {
		t.Fatal(err)
	}
	// The commands, without a trailing comment.
	command := regexp.MustCompile(`(?m)^(go test [^#\n]*?)\s*(#.*)?$`)

	m := command.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no line that starts with go test")
	}
	want := strings.Fields(string(m[1]))
	var runs [][]string
	for _, m := range command.FindAllSubmatch(ci, -1) {
		runs = append(runs, strings.Fields(string(m[1])))
	}
	for _, run := range runs {
		if !slices.ContainsFunc(want, func(f string) bool { return !slices.Contains(run, f) }) {
			return
		}
	}
	t.Errorf(".ci/run runs no go test with every word of the README's %q; it runs %q", strings.Join(want, " "), runs)
}
