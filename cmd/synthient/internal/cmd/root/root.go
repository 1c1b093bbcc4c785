package root

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/account"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/api"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/auth"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/demo"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/exports"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/fakeserver"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/health"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/index"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/lookup"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/mcp"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/stream"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/version"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// NewCmdRoot returns the synthient command, its global flags bound to
// f.Flags, and every command under it.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "synthient",
		Short: "Query the Synthient API: lookups, account, exports and streams",
		Long: `synthient queries the Synthient API v4: IP and domain lookups, the account,
Parquet exports and real-time NDJSON streams.

It takes the API key from the first of: --api-key, or --api-key-file (a file
holding the key, or - for stdin: the key then stays out of the process list);
SYNTHIENT_API_KEY; SYNTHIENT_API_KEY in a .env file of the current directory;
the key 'synthient auth login' kept for the profile (--profile,
SYNTHIENT_PROFILE), in the system keychain or a 0600 file, sent only to the
host it was logged in for. The profiles of
$XDG_CONFIG_HOME/synthient/config.toml set the base URL, timeouts and retries.
With --fake it runs against an in-process fake API instead, and needs no key.
Start with:

  synthient demo
  synthient auth login

Control characters in what the server sends are printed as visible escapes
(\x1b, \u009b), never sent to the terminal, and an argument that looks like an
API key is printed as [redacted].`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cmdutil.NoArgs,
		// --version is the root's own flag, not cobra's: it runs after the
		// global flags were checked, so it honours --output, --jq and
		// --template as the version command does.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !showVersion {
				return cmd.Help()
			}
			if err := cmdutil.RefuseFlags(cmd, unusedFlags["version"], "--version"); err != nil {
				return err
			}
			return version.Write(f.Printer, f.Printer.Out)
		},
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version (as the version command does)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &clierr.Error{Code: clierr.Usage, Err: err, Hint: true}
	})
	addGlobalFlags(root, &f.Flags)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return prepare(cmd, f)
	}
	root.AddCommand(
		demo.NewCmdDemo(f),
		lookup.NewCmdLookup(f),
		account.NewCmdAccount(f),
		auth.NewCmdAuth(f),
		api.NewCmdAPI(f, nil),
		health.NewCmdHealth(f),
		exports.NewCmdExports(f),
		exports.NewCmdOfficialDownload(f, nil),
		index.NewCmdIndex(f),
		stream.NewCmdStream(f),
		fakeserver.NewCmdFakeServer(f),
		mcp.NewCmdMCP(f),
		version.NewCmdVersion(f),
	)
	refuseUnknownShells(root)
	hideUnusedFlags(root)
	addDocsLinks(root)
	return root
}

// hideUnusedFlags leaves out of a command's help the global flags it
// refuses (unusedFlags).
func hideUnusedFlags(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		var hidden []*pflag.Flag
		if words := strings.Fields(cmd.CommandPath()); len(words) >= 2 {
			for _, name := range unusedFlags[words[1]] {
				if f := root.PersistentFlags().Lookup(name); f != nil && !f.Hidden {
					f.Hidden = true
					hidden = append(hidden, f)
				}
			}
		}
		help(cmd, args)
		for _, f := range hidden {
			f.Hidden = false
		}
	})
}

// refuseUnknownShells makes `completion SHELL` for a shell cobra has no
// script for a usage error (exit 2: unknown command), where cobra would
// print the help and exit 0: the completion command becomes runnable
// (printing its help), so that cobra checks its arguments.
func refuseUnknownShells(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
}
