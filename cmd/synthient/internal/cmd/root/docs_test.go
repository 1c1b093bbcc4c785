package root_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// Tests of docs.go: help and errors link to the docs by URL.

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown document.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	for _, l := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(l, "#"); ok {
			h = strings.ToLower(strings.TrimSpace(strings.TrimLeft(h, "#")))
			anchors["#"+strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
		}
	}
	return anchors
}

// Every command's help ends with the address of its documentation, a
// section of docs/cli.md that exists.
func TestHelpLinksTheDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(clitest.RepoFile(t, "docs/cli.md"))
	require.NoError(t, err)
	anchors := headingAnchors(string(doc))
	require.True(t, anchors["#commands"], "the anchors of docs/cli.md: %v", anchors)
	link := regexp.MustCompile(`\nDocs: (` + regexp.QuoteMeta(cmdutil.DocsURL) + `(#[a-z0-9-]+)?)$`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		m := link.FindStringSubmatch(c.Long)
		if !assert.NotNil(t, m, "%s: its help does not end with the docs' address:\n%s", c.CommandPath(), c.Long) {
			return
		}
		if m[2] != "" {
			assert.True(t, anchors[m[2]], "%s links %s, which docs/cli.md has no heading for", c.CommandPath(), m[1])
		}
	}
	walk(clitest.Root())
	r := clitest.Call{Args: []string{"lookup", "ips", "--help"}}.Run(t)
	assert.Contains(t, r.Stdout, "\nDocs: "+cmdutil.DocsURL+"#batches\n")
}
