package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
)

// GroupCommand returns a command that only holds subcommands: run with an
// argument that names none, it is a usage error, not a help page.
func GroupCommand(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return UnknownCommand(cmd, args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// CSVAnnotation marks a command that can print CSV: its value names the
// rows ("one row per address looked up").
const CSVAnnotation = "synthient/csv"

// WithCSV marks cmd as printing CSV rows of what rows describes, and
// returns it.
func WithCSV(cmd *cobra.Command, rows string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[CSVAnnotation] = rows
	return cmd
}

// StdinAnnotation marks a command that reads stdin itself (its value
// says what it reads there), which --api-key-file - cannot share.
const StdinAnnotation = "synthient/stdin"

// TakesFeed readies cmd, whose first argument is a feed: its help lists
// the feed names, and shell completion offers them. It returns cmd.
func TakesFeed(cmd *cobra.Command) *cobra.Command {
	long := cmd.Long
	if long == "" {
		long = cmd.Short + "."
	}
	cmd.Long = long + "\n\nFEED is one of: " + strings.Join(FeedNames(), ", ") + "."
	cmd.ValidArgsFunction = CompleteFeed
	return cmd
}

// FeedNames returns the names of the feeds, as synthient.Feeds orders
// them.
func FeedNames() []string {
	names := make([]string, len(synthient.Feeds))
	for i, f := range synthient.Feeds {
		names[i] = string(f)
	}
	return names
}

// CompleteFeed completes a command's first argument with the feed names
// that start with what was typed, and no later argument with file names.
func CompleteFeed(_ *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, name := range FeedNames() {
		if strings.HasPrefix(name, typed) {
			out = append(out, name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// ParseFeed parses a FEED argument; an unknown feed is a usage error.
func ParseFeed(s string) (synthient.Feed, error) {
	f, err := synthient.ParseFeed(s)
	if err != nil {
		return "", clierr.Usagef("unknown feed %q (one of %v)", s, synthient.Feeds)
	}
	return f, nil
}

// CheckLimit refuses a --limit given outside 1 to max: 0 would otherwise
// silently mean the API's default, which leaving the flag out says.
func CheckLimit(cmd *cobra.Command, limit, max int) error {
	if cmd.Flags().Changed("limit") && (limit < 1 || limit > max) {
		return clierr.Usagef("--limit must be 1 to %d, not %d (leave it out for the API's default)", max, limit)
	}
	return nil
}

// RefuseFlags refuses the first of the flags names that was given to
// cmd, as not applying to what.
func RefuseFlags(cmd *cobra.Command, names []string, what string) error {
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			return clierr.Usagef("--%s does not apply to %s", name, what)
		}
	}
	return nil
}

// DocsURL is the address of the command's documentation, which an
// installed binary has no copy of.
const DocsURL = "https://github.com/synthient-go/synthient/blob/main/docs/cli.md"

// SetExamples sets cmd's Example from its lines, each a command line that
// runs as it is against --fake (the examples test runs every one).
func SetExamples(cmd *cobra.Command, lines ...string) {
	cmd.Example = "  " + strings.Join(lines, "\n  ")
}
