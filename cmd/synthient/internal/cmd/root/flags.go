package root

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/shape"
)

// addGlobalFlags adds to root the persistent flags, which every command
// takes, bound to fl.
func addGlobalFlags(root *cobra.Command, fl *cmdutil.GlobalFlags) {
	f := root.PersistentFlags()
	f.StringVar(&fl.APIKey, "api-key", "", "API key (default $SYNTHIENT_API_KEY)")
	f.StringVar(&fl.APIKeyFile, "api-key-file", "", "read the API key from this file (- for stdin); not with --api-key")
	f.StringVar(&fl.Profile, "profile", "", "the profile of config.toml, and its stored key (default $SYNTHIENT_PROFILE, else default)")
	f.StringVar(&fl.BaseURL, "base-url", "", "API base URL including /api/v4 (default $SYNTHIENT_BASE_URL, else "+synthient.DefaultBaseURL+")")
	f.BoolVar(&fl.Fake, "fake", false, "run against an in-process fake API (no key needed)")
	f.IntVar(&fl.MaxRetries, "max-retries", synthient.DefaultMaxRetries, "retries after the first attempt, where the retry class allows (0 to 16)")
	f.DurationVar(&fl.Timeout, "timeout", synthient.DefaultTimeout, "bound on each wait for a read or write")
	f.DurationVar(&fl.OpenTimeout, "open-timeout", synthient.DefaultOpenTimeout, "bound on each connect")
	f.StringVarP(&fl.Output, "output", "o", "text", "output format: text, json (NDJSON for batches and streams) or csv (lookups, export listings and rows)")
	f.StringVar(&fl.JQ, "jq", "", "print what this jq expression makes of each JSON result (strings raw, one value per line)")
	f.StringVar(&fl.Template, "template", "", "print each JSON result through this Go template (text/template)")
	f.BoolVarP(&fl.Verbose, "verbose", "v", false, "log every retry decision and rate-limit hold on stderr")
	f.BoolVar(&fl.Trace, "trace", false, "print the tree of each call on stderr: attempts, waits, holds, stop reasons, durations")
	f.BoolVarP(&fl.Quiet, "quiet", "q", false, "print nothing on stderr but the final error (and what -v or --trace ask for): no progress bar, invalid lines, reports or summary")
	f.BoolVar(&fl.NoProgress, "no-progress", false, "draw no progress bar, also on a terminal")
	f.BoolVar(&fl.NoColor, "no-color", false, "print no colour, also on a terminal (as NO_COLOR does)")
	f.StringVarP(&fl.Format, "format", "f", "", "the same as --output (the official Synthient CLI's name)")
	f.BoolVarP(&fl.Silent, "silent", "s", false, "the same as --quiet (the official Synthient CLI's name)")
	formats := cobra.FixedCompletions([]cobra.Completion{"text", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp)
	// Only fails for a flag that does not exist.
	_ = root.RegisterFlagCompletionFunc("output", formats)
	_ = root.RegisterFlagCompletionFunc("format", formats)
}

// unusedFlags are the global flags a command has no use for, by the first
// word of its path below the root: given, they are refused rather than
// silently ignored (fake-server --api-key K would not serve K).
var unusedFlags = map[string][]string{
	"demo":        {"api-key", "api-key-file", "profile", "base-url", "fake", "timeout", "open-timeout", "jq", "template", "trace"},
	"fake-server": {"api-key", "api-key-file", "profile", "base-url", "fake", "max-retries", "timeout", "open-timeout", "verbose", "trace"},
	"completion":  {"api-key", "api-key-file", "profile", "base-url", "fake", "max-retries", "timeout", "open-timeout", "verbose", "output", "format", "jq", "template", "trace"},
	"version":     {"api-key", "api-key-file", "profile", "base-url", "fake", "max-retries", "timeout", "open-timeout", "verbose", "trace"},
	"auth":        {"fake"},
	"mcp":         {"output", "format", "jq", "template"},
}

// UnusedFlags returns the global flags each command refuses, by the
// first word of its path below the root.
func UnusedFlags() map[string][]string {
	out := make(map[string][]string, len(unusedFlags))
	for k, v := range unusedFlags {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// prepare checks the global flags of cmd, builds the printer they ask
// for, and, for a command that calls the API, reads the configuration
// and resolves the API key (auth login takes a new one).
func prepare(cmd *cobra.Command, f *cmdutil.Factory) error {
	f.IO.SetColor(!f.Flags.NoColor)
	for _, check := range []func(*cobra.Command, *cmdutil.Factory) error{checkUnusedFlags, takeSynonyms, checkOutputFlag, checkFakeFlags, checkKeyFlags} {
		if err := check(cmd, f); err != nil {
			return err
		}
	}
	words := strings.Fields(cmd.CommandPath())
	if len(words) < 2 || slices.Contains(unusedFlags[words[1]], "base-url") {
		return nil // no call of the API
	}
	keeping := cmd.CommandPath() == "synthient auth login" || cmd.CommandPath() == "synthient auth logout"
	if err := f.LoadConfig(cmd.Flags().Changed, keeping); err != nil {
		return err
	}
	if keeping {
		return nil // they take no key from the settings
	}
	return f.ResolveKey(cmd.Context())
}

// takeSynonyms takes the official Synthient CLI's names of two global
// flags: --format (-f) for --output, --silent (-s) for --quiet. --format
// and --output that disagree are refused.
func takeSynonyms(cmd *cobra.Command, f *cmdutil.Factory) error {
	fl := &f.Flags
	if cmd.Flags().Changed("format") {
		if cmd.Flags().Changed("output") && fl.Output != fl.Format {
			return clierr.Usagef("--output %s and --format %s name two formats: give one (they are the same flag)", fl.Output, fl.Format)
		}
		fl.Output = fl.Format
	}
	fl.Quiet = fl.Quiet || fl.Silent
	return nil
}

// checkUnusedFlags refuses a global flag that cmd would ignore.
func checkUnusedFlags(cmd *cobra.Command, _ *cmdutil.Factory) error {
	words := strings.Fields(cmd.CommandPath())
	if len(words) < 2 {
		return nil
	}
	return cmdutil.RefuseFlags(cmd, unusedFlags[words[1]], words[1])
}

// checkOutputFlag refuses an --output format the command cannot print,
// and --jq or --template that do not compile or are given together or
// with csv; on a command that writes a file (--out), it says that -o is
// not --out. It sets f.Printer.
func checkOutputFlag(cmd *cobra.Command, f *cmdutil.Factory) error {
	fl := &f.Flags
	if err := checkFormat(cmd, fl.Output); err != nil {
		return err
	}
	if err := checkShapeFlags(cmd, fl); err != nil {
		return err
	}
	sh, err := shape.Compile(cmd.Context(), fl.JQ, fl.Template)
	if err != nil {
		return clierr.New(clierr.Usage, err)
	}
	f.Printer = &output.Printer{Format: fl.Output, Shape: sh, Out: f.IO.Out, Err: f.IO.ErrOut, Quiet: fl.Quiet, Describe: f.Describe}
	return nil
}

// checkFormat refuses an --output format cmd cannot print: csv where cmd
// prints none, and a word that is no format, which may be a file name
// (the official CLI's -o, or --out meant).
func checkFormat(cmd *cobra.Command, format string) error {
	switch format {
	case output.Text, output.JSON:
		return nil
	case output.CSV:
		if _, ok := cmd.Annotations[cmdutil.CSVAnnotation]; !ok {
			return clierr.Usagef("--output csv applies to %s; here use json, or --jq with @csv", csvCommands(cmd.Root()))
		}
		return nil
	}
	if cmd.Flags().Lookup("out") != nil {
		return clierr.Usagef("--output (-o) is the output format, text, json or csv, not %q: to write a file, use --out %s", format, format)
	}
	if strings.ContainsAny(format, "./\\") {
		// The official CLI's -o names a file.
		return clierr.Usagef("--output (-o) is the output format, text, json or csv, not %q: to write to a file, redirect stdout (> %s)", format, render.ShellWord(format))
	}
	return clierr.Usagef("--output must be text, json or csv, not %q", format)
}

// checkShapeFlags refuses --jq or --template given empty, the two
// together, or either with --output csv.
func checkShapeFlags(cmd *cobra.Command, fl *cmdutil.GlobalFlags) error {
	for _, name := range []string{"jq", "template"} {
		if fg := cmd.Flags().Lookup(name); fg != nil && fg.Changed && fg.Value.String() == "" {
			// An unset variable in --jq "$EXPR" must not print the table.
			return clierr.Usagef("--%s is empty: give an expression, or leave the flag out", name)
		}
	}
	if fl.JQ != "" && fl.Template != "" {
		return clierr.Usagef("--jq and --template cannot be combined: pick one")
	}
	if fl.Output == output.CSV && (fl.JQ != "" || fl.Template != "") {
		return clierr.Usagef("--output csv cannot be combined with --jq or --template, which shape JSON: use --jq with @csv")
	}
	return nil
}

// csvCommands lists the commands that print CSV.
func csvCommands(root *cobra.Command) string {
	var names []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if _, ok := c.Annotations[cmdutil.CSVAnnotation]; ok {
			names = append(names, strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return strings.Join(names, ", ")
}

// checkFakeFlags refuses --fake with a base URL or a key, which it would
// ignore.
func checkFakeFlags(cmd *cobra.Command, f *cmdutil.Factory) error {
	if !f.Flags.Fake {
		return nil
	}
	for _, name := range []string{"base-url", "api-key", "api-key-file"} {
		if cmd.Flags().Changed(name) {
			return clierr.Usagef("--fake runs against an in-process fake API: it cannot be combined with --%s", name)
		}
	}
	return nil
}

// checkKeyFlags refuses the combinations of key flags that cannot mean
// one key: --api-key with --api-key-file, and --api-key-file - on a
// command that reads its input from stdin too (--file -).
func checkKeyFlags(cmd *cobra.Command, f *cmdutil.Factory) error {
	if f.Flags.APIKeyFile == "" {
		return nil
	}
	if cmd.Flags().Changed("api-key") {
		return clierr.Usagef("--api-key and --api-key-file cannot be combined: pass one")
	}
	if in := cmd.Flags().Lookup("file"); f.Flags.APIKeyFile == "-" && in != nil && in.Value.String() == "-" {
		return clierr.Usagef("--api-key-file - and --file - cannot both read stdin")
	}
	if what, ok := cmd.Annotations[cmdutil.StdinAnnotation]; ok && f.Flags.APIKeyFile == "-" {
		return clierr.Usagef("--api-key-file - cannot read stdin: %s reads %s there (give a file, or SYNTHIENT_API_KEY)", cmd.Name(), what)
	}
	return nil
}
