// Package index is the index command group: build, check, stats and
// follow a local index of the feeds' addresses (package feedindex), which
// answers "is this address in today's feeds" without spending a credit.
package index

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/feedindex"
)

// NewCmdIndex returns the index command group.
func NewCmdIndex(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.GroupCommand("index", "Build, check and follow a local index of the feeds' addresses (no credit spent)",
		NewCmdBuild(f, nil),
		cmdutil.WithCSV(NewCmdCheck(f, nil), "one row per feed holding an address (with --all, one per address not found)"),
		NewCmdStats(f, nil),
		NewCmdFollow(f, nil))
}

// openIndex opens the index file at path, with the maximum age maxAge
// when it is not negative (else the file's).
func openIndex(path string, maxAge time.Duration) (*feedindex.Index, error) {
	var opts []feedindex.Option
	if maxAge >= 0 {
		opts = append(opts, feedindex.WithMaxAge(maxAge))
	}
	return feedindex.Open(path, opts...)
}

// indexHelp is what the commands' help says of the index.
const indexHelp = `An index holds the addresses of the proxies and ja4t feeds and the address
ranges of the anonymizers feed: for each address, which feeds hold it, with
the provider, type, country, ASN and last-seen time of the latest row that
holds it. Rows older than the maximum age (--max-age) are left out. Building,
checking and following an index spend no credit: exports and streams are
free.`
