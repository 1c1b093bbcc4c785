package cmdutil

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
)

// The argument checks of the commands. Their errors name what is missing
// or too much, in the words of the command's usage, and ask for the
// pointer to the command's --help (clierr.Error.Hint).

// NoArgs refuses any argument. On a command that holds subcommands, an
// argument is an unknown command: the error suggests the subcommands its
// name is close to.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return UnknownCommand(cmd, args[0])
	}
	return usage("%s takes no argument, not %s", commandName(cmd), quoteArgs(args))
}

// UnknownCommand is the error of name given to cmd as a command: it
// suggests the subcommands whose names are close to it ("lookupp": did
// you mean lookup?).
func UnknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(quoted(s), " or ") + "?"
	}
	return usage("%s", msg)
}

// ExactArgs takes exactly the arguments names ("FEED", "ID").
func ExactArgs(names ...string) cobra.PositionalArgs {
	return RangeArgs(len(names), names...)
}

// RangeArgs takes at least min of the arguments names, at most all of
// them.
func RangeArgs(min int, names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		takes := fmt.Sprintf("%s takes %s", commandName(cmd), argUsage(min, names))
		switch {
		case len(args) < min:
			return usage("missing %s: %s", strings.Join(names[len(args):min], " "), takes)
		case len(args) > len(names):
			return usage("too many arguments (%d): %s, not %s", len(args), takes, quoteArgs(args))
		}
		return nil
	}
}

// argUsage writes the arguments of a command: those from min on in
// brackets.
func argUsage(min int, names []string) string {
	out := strings.Join(names[:min], " ")
	if min < len(names) {
		out = strings.TrimSpace(out + " [" + strings.Join(names[min:], " ") + "]")
	}
	return out
}

// commandName is cmd's path below the root ("lookup domain").
func commandName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

func usage(format string, args ...any) error {
	return &clierr.Error{Code: clierr.Usage, Hint: true, Err: fmt.Errorf(format, args...)}
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// quoteArgs renders args as the command line gave them, quoted, at most
// five of them.
func quoteArgs(args []string) string {
	q := quoted(args[:min(len(args), 5)])
	if len(args) > 5 {
		q = append(q, "...")
	}
	return strings.Join(q, " ")
}

// SourceArgs takes the arguments of a command that reads an export: FILE,
// or FEED ID.
func SourceArgs(cmd *cobra.Command, args []string) error {
	takes := commandName(cmd) + " takes {FILE | FEED ID}"
	switch {
	case len(args) == 0:
		return usage("missing FILE, or FEED ID: %s", takes)
	case len(args) > 2:
		return usage("too many arguments (%d): %s, not %s", len(args), takes, quoteArgs(args))
	}
	return nil
}
