package root_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/root"
)

// examples returns the Example lines of every command under root, by
// command path.
func examples(root *cobra.Command) map[string][]string {
	out := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		for _, l := range strings.Split(c.Example, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out[c.CommandPath()] = append(out[c.CommandPath()], l)
			}
		}
	}
	walk(root)
	return out
}

// Every command a user runs has Example lines in its help.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	all := examples(clitest.Root())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.HasSubCommands() || c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		assert.NotEmpty(t, all[c.CommandPath()], "%s has no Example", c.CommandPath())
	}
	walk(clitest.Root())
	for path, lines := range all {
		help := clitest.Call{Args: append(strings.Fields(path)[1:], "--help")}.Run(t)
		assert.Contains(t, help.Stdout, "Examples:\n  "+lines[0], path)
	}
}

// Every example runs (against the fake on the fixed clock, when it calls
// the API) and succeeds, its files in a temporary directory: in one home
// (a configuration directory and a keychain), the examples of auth login
// first and those of auth logout last; a redirection of stdin from a file
// (< key.txt) is followed, and auth login's prompt is answered. The demo
// (TestDemo), fake-server and mcp (which serve until interrupted;
// TestFakeServer*, package mcp) have tests of their own.
func TestExamplesRun(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)                // not parallel: a download without --out writes to the current directory
	srv := clitest.NewServer(t) // on the fixed clock, whose exports the examples name
	addresses := filepath.Join(dir, "addresses.txt")
	require.NoError(t, os.WriteFile(addresses, []byte("1.1.1.1\n8.8.8.8\n# a comment\n1.1.1.1\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.txt"), []byte(srv.APIKey+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ips.json"), []byte(`{"ips": ["1.1.1.1", "8.8.8.8"]}`), 0o600))
	files := strings.NewReplacer(
		"addresses.txt", addresses,
		"resend.txt", filepath.Join(dir, "resend.txt"),
		"check.txt", filepath.Join(dir, "check.txt"),
		"proxies.parquet", filepath.Join(dir, "proxies.parquet"),
		"key.txt", filepath.Join(dir, "key.txt"),
		"feeds.synidx", filepath.Join(dir, "feeds.synidx"),
	)
	// The index the examples of index check, stats and follow read.
	clitest.RequireCode(t, clitest.RunSrv(t, srv, "index", "build", "proxies", "--latest", "--out", filepath.Join(dir, "feeds.synidx")), 0)
	keychain, home := &clitest.Keychain{}, t.TempDir()
	for _, line := range exampleLines(t) {
		t.Run(line, func(t *testing.T) {
			args := strings.Fields(files.Replace(line))
			require.Equal(t, "synthient", args[0])
			args = args[1:]
			c := clitest.Call{Args: args}
			if !slices.Contains(root.UnusedFlags()[args[0]], "base-url") { // a command that calls the API
				c = clitest.Against(srv, args...)
			}
			if i := slices.Index(c.Args, "<"); i >= 0 {
				f, err := os.Open(c.Args[i+1])
				require.NoError(t, err)
				defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
				c.Stdin, c.Args = f, c.Args[:i]
			}
			if args[0] == "auth" {
				c.Keychain, c.Env["XDG_CONFIG_HOME"], c.TTYIn, c.Password = keychain, home, true, []byte(srv.APIKey)
				delete(c.Env, "SYNTHIENT_API_KEY") // the key auth login kept
			}
			r := c.Run(t)
			clitest.RequireCode(t, r, 0, args...)
			assert.NotEmpty(t, r.Stdout+r.Stderr, "the output")
		})
	}
	assert.FileExists(t, filepath.Join(dir, "proxies.parquet"))
}

// exampleLines returns the examples to run, auth login's first and auth
// logout's last.
func exampleLines(t *testing.T) []string {
	t.Helper()
	var first, middle, last []string
	for path, lines := range examples(clitest.Root()) {
		switch path {
		case "synthient demo", "synthient fake-server", "synthient mcp":
		case "synthient auth login":
			first = append(first, lines...)
		case "synthient auth logout":
			last = append(last, lines...)
		default:
			middle = append(middle, lines...)
		}
	}
	require.NotEmpty(t, first)
	require.NotEmpty(t, last)
	return append(append(first, middle...), last...)
}

// --fake runs every command against an in-process fake, with no key.
//
//nolint:tparallel // the second download replaces the first one's file
func TestFakeEveryCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addrs.txt")
	require.NoError(t, os.WriteFile(addrFile, []byte("# test\n1.1.1.1\n8.8.8.8\n\n2606:4700:4700::1111\n"), 0o600))
	out := filepath.Join(dir, "export.parquet")
	tests := []struct {
		args  []string
		stdin string
		check func(t *testing.T, r clitest.Result)
	}{
		{args: []string{"lookup", "ip", "1.1.1.1"}, check: contains("IP", "1.1.1.1", "Network", "AS13335")},
		{args: []string{"lookup", "ip", "203.0.113.7", "-o", "json"}, check: contains(`"ip":"203.0.113.7"`, `"risk_score"`)},
		{args: []string{"lookup", "ips", "--file", addrFile}, check: func(t *testing.T, r clitest.Result) {
			ls := clitest.Lines(r.Stdout)
			require.Len(t, ls, 4, "table:\n%s", r.Stdout)
			for i, prefix := range []string{"IP ", "1.1.1.1 ", "8.8.8.8 ", "2606:4700:4700::1111 "} {
				assert.True(t, strings.HasPrefix(ls[i], prefix), "line %d does not start with %q:\n%s", i+1, prefix, r.Stdout)
			}
		}},
		{args: []string{"lookup", "ips", "--file", "-", "--concurrency", "2", "-o", "json"}, stdin: "9.9.9.9\n1.0.0.1\n", check: func(t *testing.T, r clitest.Result) {
			assert.Equal(t, []string{"9.9.9.9", "1.0.0.1"}, clitest.NDJSONIPs(t, r.Stdout), "results")
		}},
		{args: []string{"lookup", "domain", "example.com", "--limit", "3"}, check: func(t *testing.T, r clitest.Result) {
			assert.Contains(t, r.Stdout, "Domain          example.com", "domain")
			assert.Equal(t, 3, strings.Count(r.Stdout, ".example.com  "), "recent events:\n%s", r.Stdout)
		}},
		{args: []string{"account"}, check: contains("Name", "Grace Hopper", "Credits", "50000", "Scopes", "BASIC")},
		{args: []string{"health"}, check: func(t *testing.T, r clitest.Result) {
			assert.Equal(t, "ok\n", r.Stdout, "health")
		}},
		{args: []string{"exports", "list", "proxies"}, check: contains("ID", "KIND", "SIZE", "hourly", "daily")},
		{args: []string{"exports", "list", "torrents", "--limit", "2"}, check: func(t *testing.T, r clitest.Result) {
			ls := clitest.Lines(r.Stdout)
			require.Len(t, ls, 5, "a page of 2:\n%s", r.Stdout)
			// A cursor would mean nothing to the next run's new fake.
			assert.Equal(t, "more: --all (with --fake each run starts a new fake API, which a --cursor from this one does not reach)", ls[4], "a page of 2:\n%s", r.Stdout)
		}},
		{args: []string{"exports", "list", "ja4t", "--limit", "2", "--all"}, check: func(t *testing.T, r clitest.Result) {
			assert.GreaterOrEqual(t, len(clitest.Lines(r.Stdout)), 4, "--all:\n%s", r.Stdout)
			assert.NotContains(t, r.Stdout, "more:", "--all")
		}},
		{args: []string{"exports", "meta", "proxies", "latest"}, check: contains("Stream", "proxies", "SHA-256", "Columns")},
		{args: []string{"exports", "download", "proxies", "latest", "--out", out}, check: downloaded(out, "")},
		{args: []string{"exports", "download", "proxies", "latest", "--out", out, "--verify", "--force"}, check: downloaded(out, "SHA-256 verified")},
		{args: []string{"stream", "proxies", "--max-events", "3"}, check: clitest.Events(3, 3)},
		{args: []string{"stream", "helio/http", "--duration", "300ms"}, check: clitest.Events(1, 100)},
		{args: []string{"stream", "anonymizers", "--reconnect", "--max-events", "3"}, check: clitest.Events(3, 3)},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(strings.Join(tt.args, " "), dir, "DIR"), func(t *testing.T) {
			args := append([]string{"--fake"}, tt.args...)
			r := clitest.Call{Args: args, Stdin: strings.NewReader(tt.stdin)}.Run(t)
			clitest.RequireCode(t, r, 0, args...)
			for _, l := range clitest.Lines(r.Stderr) { // only lookup ips's summary
				assert.Regexp(t, clitest.SummaryRe, l, "stderr")
			}
			tt.check(t, r)
		})
	}
}

// contains checks that stdout holds each of want.
func contains(want ...string) func(t *testing.T, r clitest.Result) {
	return func(t *testing.T, r clitest.Result) {
		t.Helper()
		for _, w := range want {
			assert.Contains(t, r.Stdout, w, "stdout")
		}
	}
}

// downloaded checks a download's report (with note) and that path holds a
// Parquet export and no temporary file was left beside it.
func downloaded(path, note string) func(t *testing.T, r clitest.Result) {
	return func(t *testing.T, r clitest.Result) {
		t.Helper()
		assert.True(t, strings.HasPrefix(r.Stdout, "wrote "+path+": proxies "), "stdout: %q", r.Stdout)
		assert.Contains(t, r.Stdout, note, "stdout")
		b, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
		require.NoError(t, err)
		assert.True(t, len(b) >= 8 && string(b[:4]) == "PAR1" && string(b[len(b)-4:]) == "PAR1", "%s is not a Parquet export (%d bytes)", path, len(b))
		parts, _ := filepath.Glob(path + "*.part")
		assert.Empty(t, parts, "temporary files were left")
	}
}

// docs/cli.md and --help agree: every global flag is in its table of
// global flags, every command in its table of commands, with each of the
// command's own flags in its row.
func TestDocsAgreeWithHelp(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(clitest.RepoFile(t, "docs/cli.md"))
	require.NoError(t, err)
	text := string(doc)
	globals, rows := docGlobalFlags(text), docCommandRows(text)
	root := clitest.Root()
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		assert.Contains(t, globals, "`--"+f.Name+"`", "global flag --%s is not in docs/cli.md's table of global flags", f.Name)
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !documented(c) {
			return
		}
		row, ok := rows[c.CommandPath()]
		if !assert.True(t, ok, "%s is not in docs/cli.md's table of commands", c.CommandPath()) {
			return
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				assert.Contains(t, row, "--"+f.Name, "%s --%s is not in its row of docs/cli.md", c.CommandPath(), f.Name)
			}
		})
	}
	walk(root)
}

// docGlobalFlags returns the first cells of docs/cli.md's table of global
// flags (text), a line each.
func docGlobalFlags(text string) string {
	var globals strings.Builder
	for _, line := range strings.Split(text[strings.Index(text, "## Global flags"):strings.Index(text, "## Commands")], "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			cell, _, _ := strings.Cut(rest, "|")
			globals.WriteString("`" + cell + "\n")
		}
	}
	return globals.String()
}

// docCommandRows returns the rows of docs/cli.md's table of commands
// (text): the first cell of each, by the command path it starts with.
func docCommandRows(text string) map[string]string {
	rows := map[string]string{}
	commands := text[strings.Index(text, "## Commands"):]
	if end := strings.Index(commands[len("## Commands"):], "\n## "); end >= 0 {
		commands = commands[:len("## Commands")+end] // the section, not the tables of the others
	}
	word := regexp.MustCompile(`^[a-z][a-z-]*$`)
	for _, line := range strings.Split(commands, "\n") {
		rest, ok := strings.CutPrefix(line, "| `synthient ")
		if !ok {
			continue
		}
		cell, _, _ := strings.Cut(strings.ReplaceAll(rest, `\|`, "/"), "|") // an escaped | is inside the cell
		path := []string{"synthient"}
		for _, w := range strings.Fields(strings.NewReplacer("`", " ", "[", " ", "{", " ").Replace(cell)) {
			if !word.MatchString(w) {
				break
			}
			path = append(path, w)
		}
		rows[strings.Join(path, " ")] = cell
	}
	return rows
}

// documented reports whether docs/cli.md's table of commands has a row
// for c: a runnable command without subcommands, not hidden, not help nor
// a shell's completion.
func documented(c *cobra.Command) bool {
	return c.Runnable() && !c.HasSubCommands() && !c.Hidden && c.Name() != "help" &&
		(c.Parent() == nil || c.Parent().Name() != "completion")
}
