package main

// Tests of examples.go: every command has examples, and they run.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every command a user runs has Example lines in its help.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	a := &app{env: &env{}, secrets: &redactor{}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.HasSubCommands() || c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		assert.NotEmpty(t, c.Example, "%s has no Example", c.CommandPath())
	}
	walk(a.rootCommand())
	for path := range examples {
		help := call{args: append(strings.Fields(path)[1:], "--help")}.run(t)
		assert.Contains(t, help.stdout, "Examples:\n  "+examples[path][0], path)
	}
}

// Every example runs (against the fake, when it calls the API) and succeeds, its files in a
// temporary directory. The demo (TestDemo) and fake-server (which serves
// until interrupted; TestFakeServer*) have tests of their own.
func TestExamplesRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addresses := filepath.Join(dir, "addresses.txt")
	require.NoError(t, os.WriteFile(addresses, []byte("1.1.1.1\n8.8.8.8\n# a comment\n1.1.1.1\n"), 0o600))
	files := strings.NewReplacer(
		"addresses.txt", addresses,
		"resend.txt", filepath.Join(dir, "resend.txt"),
		"check.txt", filepath.Join(dir, "check.txt"),
		"proxies.parquet", filepath.Join(dir, "proxies.parquet"),
	)
	for path, lines := range examples {
		if path == "synthient demo" || path == "synthient fake-server" {
			continue
		}
		for _, line := range lines {
			t.Run(line, func(t *testing.T) {
				args := strings.Fields(files.Replace(line))
				require.Equal(t, "synthient", args[0])
				args = args[1:]
				if !slices.Contains(unusedFlags[args[0]], "fake") { // a command that calls the API
					args = append([]string{"--fake"}, args...)
				}
				r := call{args: args}.run(t)
				requireCode(t, r, 0, args...)
				assert.NotEmpty(t, r.stdout, "stdout")
			})
		}
	}
	assert.FileExists(t, filepath.Join(dir, "proxies.parquet"))
}
