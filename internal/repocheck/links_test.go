package repocheck_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks that every relative link of README.md and docs/*.md
// names a file or directory of the repository and, with a #fragment into a
// Markdown file, one of its headings; and that no Markdown or Go file points
// at the steering folder beside the repository (outside), which a clone
// does not have.
func TestDocLinks(t *testing.T) {
	root := moduleRoot(t)
	t.Chdir(root)
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range append([]string{"README.md"}, docs...) {
		data, err := os.ReadFile(file) //nolint:gosec // a file of this repository
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, fragment, _ := strings.Cut(target, "#")
				if path == "" {
					path = file
				} else {
					path = filepath.Join(filepath.Dir(file), path)
				}
				if _, err := os.Stat(path); err != nil { //nolint:gosec // the target of a link in this repository's docs: checking it is the test
					t.Errorf("%s:%d: link to %s: %v", file, i+1, target, err)
					continue
				}
				if fragment != "" && strings.HasSuffix(path, ".md") && !hasHeading(t, path, fragment) {
					t.Errorf("%s:%d: link to %s: %s has no heading #%s", file, i+1, target, path, fragment)
				}
			}
		}
	}

	// The folder's relative path, not spelled out, or this file would match.
	shared := ".." + "/" + "shared/"
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); d.IsDir() || ext != ".md" && ext != ".go" {
			return nil
		}
		data, err := os.ReadFile(path) //nolint:gosec // a file of this repository
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, shared) {
				t.Errorf("%s:%d: points at the steering folder outside the repository: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasHeading reports whether the Markdown file has a heading whose GitHub
// anchor is fragment: lower case, spaces as hyphens, other punctuation dropped.
func hasHeading(t *testing.T, file, fragment string) bool {
	data, err := os.ReadFile(file) //nolint:gosec // a file of this repository
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		heading, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		heading = strings.TrimSpace(strings.TrimLeft(heading, "#"))
		var anchor strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				anchor.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				anchor.WriteRune(r)
			}
		}
		if anchor.String() == fragment {
			return true
		}
	}
	return false
}
