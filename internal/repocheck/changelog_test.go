package repocheck_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// changelog is CHANGELOG.md cut into its "## " sections.
type changelog struct {
	text     string
	sections []section
}

type section struct {
	heading string // the line after "## "
	body    string
}

func readChangelog(t *testing.T) changelog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "CHANGELOG.md"))
	require.NoError(t, err)
	c := changelog{text: string(data)}
	for _, part := range strings.Split("\n"+c.text, "\n## ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		c.sections = append(c.sections, section{heading: heading, body: body})
	}
	require.NotEmpty(t, c.sections, "CHANGELOG.md has no ## sections")
	return c
}

// links returns the link reference definitions, "[0.1.0]: URL": label -> URL.
func (c changelog) links() map[string]string {
	links := map[string]string{}
	for _, line := range strings.Split(c.text, "\n") {
		if label, url, ok := strings.Cut(line, "]: "); ok && strings.HasPrefix(label, "[") {
			links[label[1:]] = url
		}
	}
	return links
}

// release is the form of a released version's heading: "[0.1.0] - 2026-12-01".
var release = regexp.MustCompile(`^\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$`)

// TestChangelogNamesTheVersion checks that the newest release in
// CHANGELOG.md is synthient.Version, and the otel module's Version (read
// from its source: it is another module), so that the code on a tag is the
// release the changelog describes; and that the releases are in order,
// newest first, each with its link.
func TestChangelogNamesTheVersion(t *testing.T) {
	t.Parallel()
	c := readChangelog(t)
	var versions []string
	for _, s := range c.sections[1:] {
		m := release.FindStringSubmatch(s.heading)
		require.NotNil(t, m, "a section after Unreleased is not a release \"[X.Y.Z] - YYYY-MM-DD\": %q", s.heading)
		versions = append(versions, m[1])
		assert.Contains(t, c.links(), m[1], "release %s has no link", m[1])
	}
	require.NotEmpty(t, versions, "CHANGELOG.md has no release")
	assert.Equal(t, synthient.Version, versions[0], "the newest release of CHANGELOG.md and synthient.Version")
	assert.True(t, slices.IsSortedFunc(versions, func(a, b string) int { return compareVersions(b, a) }),
		"the releases are not newest first: %q", versions)
	assert.Equal(t, "https://github.com/synthient-go/synthient/compare/v"+versions[0]+"...HEAD", c.links()["Unreleased"],
		"the Unreleased link compares with the newest release")

	otel, err := os.ReadFile(filepath.Join(moduleRoot(t), "otel", "observer.go"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^const Version = "([^"]+)"$`).FindSubmatch(otel)
	require.NotNil(t, m, "otel/observer.go declares no const Version")
	assert.Equal(t, synthient.Version, string(m[1]), "the otel module is released at the SDK's version")
}

// TestChangelogHasUnreleased checks that CHANGELOG.md starts with the
// Unreleased section that every change adds to, with the four headings.
func TestChangelogHasUnreleased(t *testing.T) {
	t.Parallel()
	c := readChangelog(t)
	require.Equal(t, "[Unreleased]", c.sections[0].heading, "the first section")
	var headings []string
	for _, line := range strings.Split(c.sections[0].body, "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			headings = append(headings, h)
		}
	}
	for _, want := range []string{"Added", "Changed", "Fixed", "Security"} {
		assert.Contains(t, headings, want, "Unreleased has no ### %s", want)
	}
}

// compareVersions compares two X.Y.Z versions by number.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range 3 {
		if d := len(pa[i]) - len(pb[i]); d != 0 {
			return d
		}
		if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return 0
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0.1.0", "0.1.0", 0},
		{"0.2.0", "0.10.0", -1},
		{"1.0.0", "0.9.9", 1},
		{"0.1.10", "0.1.9", 1},
	} {
		got := compareVersions(tc.a, tc.b)
		assert.Equal(t, tc.want, min(max(got, -1), 1), "%s against %s", tc.a, tc.b)
	}
}
