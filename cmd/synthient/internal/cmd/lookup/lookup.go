// Package lookup is the lookup command group: lookup ip, lookup ips and
// lookup domain, the billed lookups.
package lookup

import (
	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// NewCmdLookup returns the lookup command group.
func NewCmdLookup(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.GroupCommand("lookup", "Look up IP addresses and domains (billed)",
		cmdutil.WithCSV(NewCmdIP(f, nil, nil), "one row per address looked up"),
		cmdutil.WithCSV(NewCmdIPs(f, nil), "one row per address looked up"),
		cmdutil.WithCSV(NewCmdDomain(f, nil), "one row"))
}
