package root

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// docsAnchors are the sections of docs/cli.md that document a command
// best, by command path; a command not named takes its parent's, and the
// root the table of commands.
var docsAnchors = map[string]string{
	"synthient":                  "#commands",
	"synthient lookup":           "#synthient-lookup",
	"synthient lookup domain":    "#commands",
	"synthient lookup ip":        "#batches",
	"synthient lookup ips":       "#batches",
	"synthient exports download": "#downloads",
	"synthient stream":           "#streams",
	"synthient index":            "#the-local-index",
	"synthient auth":             "#logging-in-and-configuration",
	"synthient api":              "#synthient-api",
	"synthient fake-server":      "#the-fake-server",
	"synthient mcp":              "#agents",
}

// docsLink returns the address of the documentation of cmd.
func docsLink(cmd *cobra.Command) string {
	for c := cmd; c != nil; c = c.Parent() {
		if a, ok := docsAnchors[c.CommandPath()]; ok {
			return cmdutil.DocsURL + a
		}
	}
	return cmdutil.DocsURL
}

// addDocsLinks ends the help of every command under root with the address
// of its documentation: an installed binary has no docs/cli.md.
func addDocsLinks(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		long := c.Long
		if long == "" {
			long = strings.TrimSuffix(c.Short, ".") + "."
		}
		c.Long = long + "\n\nDocs: " + docsLink(c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
