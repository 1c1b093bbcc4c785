package lookup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of lookup.go: synthient lookup without a subcommand, the official
// CLI's form.

// synthient lookup ADDR... and addresses piped into synthient lookup act
// as lookup ip: one address alone, in full; several, or stdin, as a bulk
// lookup, with its flags.
func TestLookupShorthand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		stdin   string
		want    []string // the addresses looked up, in order
		batches int      // the bulk requests sent
	}{
		{"two addresses", []string{"lookup", "8.8.8.8", "1.1.1.1"}, "", []string{"8.8.8.8", "1.1.1.1"}, 1},
		{"an IPv6 address and its flags", []string{"lookup", "2606:4700:4700::1111", "8.8.8.8", "--batch-size", "1"}, "",
			[]string{"2606:4700:4700::1111", "8.8.8.8"}, 2},
		{"piped", []string{"lookup"}, "8.8.8.8 1.1.1.1\n9.9.9.9\n", []string{"8.8.8.8", "1.1.1.1", "9.9.9.9"}, 1},
		{"-", []string{"lookup", "-"}, "8.8.8.8\n", []string{"8.8.8.8"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Against(srv, append([]string{"-o", "json"}, tt.args...)...)
			c.Stdin = strings.NewReader(tt.stdin)
			r := c.Run(t)
			clitest.RequireCode(t, r, 0, tt.args...)
			assert.Equal(t, tt.want, clitest.NDJSONIPs(t, r.Stdout), "looked up")
			assert.Equal(t, tt.batches, srv.Arrivals(synthienttest.RouteLookupIPs), "bulk requests")
			assert.Regexp(t, `^synthient: \d+ address(es)? read: \d+ looked up`, r.Stderr, "the summary of a bulk lookup")
		})
	}

	// One address is lookup ip's detailed view of it.
	srv := clitest.NewServer(t)
	want := clitest.RunSrv(t, srv, "lookup", "ip", "8.8.8.8")
	clitest.RequireCode(t, want, 0)
	r := clitest.RunSrv(t, srv, "lookup", "8.8.8.8")
	clitest.RequireCode(t, r, 0)
	assert.Equal(t, want.Stdout, r.Stdout, "synthient lookup 8.8.8.8")
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIP), "single lookups")
}

// synthient lookup never exits 0 having looked nothing up, and never sends
// what it was not given as an IP address: each of these is a usage error
// that says what to type, and nothing is sent.
func TestLookupShorthandRefuses(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "addrs.txt")
	require.NoError(t, os.WriteFile(file, []byte("1.1.1.1\n"), 0o600))
	tests := []struct {
		name     string
		args     []string
		stdin    string
		terminal bool // stdin is a terminal
		want     string
	}{
		{"a terminal and no address", nil, "", true,
			`lookup needs addresses: synthient lookup 8.8.8.8 1.1.1.1, or synthient lookup < FILE, or pipe them in (see 'synthient lookup --help'`},
		{"nothing piped in", nil, "", false, "synthient lookup read no address: give addresses (synthient lookup 8.8.8.8 1.1.1.1), or pipe them in"},
		{"only comments piped in", nil, "# none\n\n", false, "synthient lookup read no address"},
		{"a domain", []string{"example.com"}, "", false,
			`"example.com" is a domain name, not an IP address: look it up with synthient lookup domain example.com`},
		{"a domain after an address", []string{"8.8.8.8", "Bücher.example."}, "", false,
			`"Bücher.example." is a domain name, not an IP address: look it up with synthient lookup domain Bücher.example.`},
		{"a mistyped command", []string{"domian", "example.com"}, "", false, `unknown command "domian" for "synthient lookup"; did you mean "domain"?`},
		{"a file", []string{file}, "", false, `"` + file + `" is a file, not an IP address: read it with synthient lookup ips --file ` + file},
		{"a network", []string{"1.1.1.0/24"}, "", false, `"1.1.1.0/24" is not an IP address, nor a command of synthient lookup (ip, ips, domain)`},
		{"an address short of a part", []string{"8.8.8"}, "", false, `"8.8.8" is not an IP address`},
		{"five parts", []string{"1.2.3.4.5"}, "", false, `"1.2.3.4.5" is not an IP address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Against(srv, append([]string{"lookup"}, tt.args...)...)
			c.Stdin, c.TTYIn = strings.NewReader(tt.stdin), tt.terminal
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, c.Args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}
