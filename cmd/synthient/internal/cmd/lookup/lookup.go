// Package lookup is the lookup command group: lookup ip, lookup ips and
// lookup domain, the billed lookups; and lookup itself given addresses,
// the official Synthient CLI's form, which acts as lookup ip.
package lookup

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/net/idna"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// NewCmdLookup returns the lookup command group. Given addresses, or none
// with addresses piped in, it is lookup ip (synthient lookup 8.8.8.8
// 1.1.1.1, echo 8.8.8.8 | synthient lookup), as in the official CLI.
func NewCmdLookup(f *cmdutil.Factory) *cobra.Command {
	ip := newIPRunner(f, "lookup", nil, nil)
	ip.usage = "synthient lookup 8.8.8.8 1.1.1.1, or synthient lookup < FILE"
	ip.bulk.NeedsAddress = true
	cmd := &cobra.Command{
		Use:   "lookup [ADDR... | -]",
		Short: "Look up IP addresses and domains (billed)",
		Long: `Look up IP addresses and domains (billed).

Given IP addresses, or none with addresses piped in, lookup is lookup ip,
with its flags: synthient lookup 8.8.8.8 1.1.1.1, echo 8.8.8.8 | synthient
lookup. Every argument must be an IP address; anything else (a domain name,
a file, a mistyped command) is refused before anything is sent, with the
command to type. A lookup that reads no address at all is refused too.`,
		Args: shorthandArgs,
		RunE: ip.run,
		// shorthandArgs suggests the subcommands close to an argument.
		SuggestionsMinimumDistance: 2,
	}
	addBulkFlags(cmd.Flags(), ip.bulk)
	cmd.AddCommand(
		cmdutil.WithCSV(NewCmdIP(f, nil, nil), "one row per address looked up"),
		cmdutil.WithCSV(NewCmdIPs(f, nil), "one row per address looked up"),
		cmdutil.WithCSV(NewCmdDomain(f), "one row"))
	cmdutil.SetExamples(cmd, "synthient lookup 8.8.8.8 1.1.1.1", "synthient lookup - < addresses.txt")
	return cmdutil.WithCSV(cmd, "one row per address looked up")
}

// shorthandArgs takes the arguments of lookup without a subcommand: IP
// addresses, or "-". Any other argument is refused, with what to type: a
// subcommand it is close to, lookup domain for a domain name, --file for
// a file.
func shorthandArgs(cmd *cobra.Command, args []string) error {
	for _, a := range args {
		if _, err := netip.ParseAddr(strings.TrimSpace(a)); err == nil || a == "-" {
			continue
		}
		return notAnAddress(cmd, a)
	}
	return nil
}

// notAnAddress is the usage error of arg, given to lookup where an IP
// address or a subcommand goes.
func notAnAddress(cmd *cobra.Command, arg string) error {
	switch {
	case len(cmd.SuggestionsFor(arg)) > 0:
		return cmdutil.UnknownCommand(cmd, arg)
	case isFile(arg):
		return fileArg("lookup", arg)
	case isDomain(arg):
		return &clierr.Error{Code: clierr.Usage, Hint: true, Err: fmt.Errorf(
			"%q is a domain name, not an IP address: look it up with synthient lookup domain %s", arg, arg)}
	}
	return &clierr.Error{Code: clierr.Usage, Hint: true, Err: fmt.Errorf(
		"%q is not an IP address, nor a command of synthient lookup (ip, ips, domain)", arg)}
}

// isDomain reports whether s parses as a domain name: labels of letters,
// digits and hyphens (or a name IDNA maps to them), at least two, the last
// not all digits (1.2.3.4.5 is no name).
func isDomain(s string) bool {
	name, err := idna.Lookup.ToASCII(strings.TrimSuffix(s, "."))
	if err != nil {
		return false
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 || len(name) > 253 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}
