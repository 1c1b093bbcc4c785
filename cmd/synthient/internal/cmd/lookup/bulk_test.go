package lookup_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/lookup"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/synthienttest"
)

// lookup ip with several addresses, or none and a stdin that is not a
// terminal, or "-", is a bulk lookup: one request, NDJSON in input order,
// the summary; lookup ips reads stdin the same ways. Several addresses may
// share a line, as "echo a b" writes them.
func TestBulkInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string
	}{
		{"lookup ip ADDR ADDR", []string{"lookup", "ip", "1.1.1.1", "8.8.8.8"}, "", []string{"1.1.1.1", "8.8.8.8"}},
		{"lookup ip from a pipe", []string{"lookup", "ip"}, "9.9.9.9\n1.0.0.1\n", []string{"9.9.9.9", "1.0.0.1"}},
		{"lookup ip -", []string{"lookup", "ip", "-"}, "9.9.9.9\n", []string{"9.9.9.9"}},
		{"lookup ips from a pipe", []string{"lookup", "ips"}, "8.8.4.4\n", []string{"8.8.4.4"}},
		{"lookup ips -", []string{"lookup", "ips", "-"}, "8.8.4.4\n1.1.1.1\n", []string{"8.8.4.4", "1.1.1.1"}},
		{"several on a line", []string{"lookup", "ip"}, "213.149.183.127 168.205.174.84\t9.9.9.9 # a comment 8.8.8.8\n", []string{"213.149.183.127", "168.205.174.84", "9.9.9.9"}},
		{"lookup ip ADDR --journal", []string{"lookup", "ip", "1.1.1.1", "--journal", "JOURNAL"}, "", []string{"1.1.1.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			args := append([]string{"-o", "json"}, tt.args...)
			for i, a := range args {
				if a == "JOURNAL" {
					args[i] = filepath.Join(t.TempDir(), "j")
				}
			}
			c := clitest.Against(srv, args...)
			c.Stdin = strings.NewReader(tt.stdin)
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK, args...)
			assert.Equal(t, tt.want, clitest.NDJSONIPs(t, r.Stdout))
			assert.Equal(t, int64(len(tt.want)), clitest.ParseSummary(t, r.Stderr).LookedUp, "summary")
			assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "one batch request")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIP), "no single lookup")
		})
	}
}

// lookup ip with one address is a single lookup, printed in full; with a
// terminal on stdin and no address it asks for ADDR, sending nothing.
func TestLookupIPOneOrNone(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "lookup", "ip", "8.8.8.8")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "Network       AS15169")
	assert.Empty(t, r.Stderr)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP))

	c := clitest.Against(srv, "lookup", "ip")
	c.TTYIn = true
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "lookup ip needs addresses")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP)+srv.Arrivals(synthienttest.RouteLookupIPs), "requests")
}

// Addresses read from stdin on a terminal (lookup ip -, lookup -,
// lookup ips --file -, and their dry runs) are looked up once the input
// ends: a note on stderr says so, and how to end it (Ctrl-D). Not from a
// pipe, not with --quiet, not for addresses given as arguments.
func TestBulkStdinTerminalNote(t *testing.T) {
	t.Parallel()
	const note = "synthient: reading addresses from the terminal until the end of the input: type them, one or more a line, then Ctrl-D (Ctrl-C stops)\n"
	srv := clitest.NewServer(t)
	for _, tt := range []struct {
		args     []string
		terminal bool
		want     bool
	}{
		{[]string{"lookup", "ip", "-"}, true, true},
		{[]string{"lookup", "-"}, true, true},
		{[]string{"lookup", "ips", "--file", "-"}, true, true},
		{[]string{"lookup", "ips", "-", "--dry-run"}, true, true},
		{[]string{"lookup", "ip", "-"}, false, false},
		{[]string{"-q", "lookup", "ip", "-"}, true, false},
		{[]string{"lookup", "ip", "9.9.9.9", "1.1.1.1"}, true, false},
	} {
		t.Run(fmt.Sprintf("%s terminal=%v", strings.Join(tt.args, " "), tt.terminal), func(t *testing.T) {
			t.Parallel()
			c := clitest.Against(srv, append([]string{"-o", "json"}, tt.args...)...)
			c.Stdin, c.TTYIn = strings.NewReader("8.8.8.8\n"), tt.terminal
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK, c.Args...)
			if tt.want {
				assert.True(t, strings.HasPrefix(r.Stderr, note), "stderr:\n%s", r.Stderr)
			} else {
				assert.NotContains(t, r.Stderr, "from the terminal")
			}
		})
	}
}

// --api-key-file - and addresses on stdin cannot both be: stdin holds one
// of them.
func TestBulkStdinTwice(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	// After the parallel subtests, before the fake closes.
	t.Cleanup(func() { assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs)) })
	for _, args := range [][]string{{"lookup", "ips", "-"}, {"lookup", "ip"}, {"lookup", "ips", "--file", "-"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			c := clitest.Call{Args: append([]string{"--base-url", srv.URL, "--api-key-file", "-"}, args...),
				Stdin: strings.NewReader(srv.APIKey + "\n")}
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, c.Args...)
			assert.Contains(t, r.Stderr, "stdin")
		})
	}
}

// A journal that is the input file (by its path, or as the file stdin
// comes from with --file -), or the file of --failed or --unknown (by
// another path, a hard link), is refused before anything is read or
// sent: its records would go among the addresses, or the list would
// empty it.
func TestBulkJournalIsInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stdin bool                                        // --file - with stdin from the input file
		flags func(t *testing.T, in, dir string) []string // the flags after the input's
		want  func(in, dir string) string
	}{
		{"the input's path", false, func(_ *testing.T, in, _ string) []string { return []string{"--journal", in} },
			func(in, _ string) string { return "--journal " + in + " is the input file" }},
		{"the file stdin comes from", true, func(_ *testing.T, in, _ string) []string { return []string{"--journal", in} },
			func(in, _ string) string { return "--journal " + in + " is the input file" }},
		{"--failed by another path", false, func(_ *testing.T, _, dir string) []string {
			return []string{"--failed", filepath.Join(dir, "out"), "--journal", filepath.Join(dir, "sub", "..", "out")}
		}, func(_, dir string) string { return "--failed " + filepath.Join(dir, "out") + " and --journal " }},
		{"--unknown by a hard link", false, func(t *testing.T, _, dir string) []string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "out"), nil, 0o600))
			require.NoError(t, os.Link(filepath.Join(dir, "out"), filepath.Join(dir, "link")))
			return []string{"--unknown", filepath.Join(dir, "out"), "--journal", filepath.Join(dir, "link")}
		}, func(_, dir string) string { return "--unknown " + filepath.Join(dir, "out") + " and --journal " }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			dir, in := inputFile(t, "1.1.1.1\n")
			c := inputCall(t, srv, in, tt.stdin, tt.flags(t, in, dir)...)
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, c.Args...)
			assert.Contains(t, r.Stderr, tt.want(in, dir))
			got, err := os.ReadFile(in) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			assert.Equal(t, "1.1.1.1\n", string(got))
			assert.Empty(t, srv.Requests())
		})
	}
}

// A file given where addresses go (lookup ips addrs.txt) is a usage error
// that says how to read it, with a command that does, and nothing is
// sent; a file whose name is an address is that address.
func TestFileGivenAsAddress(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "addrs.txt")
	require.NoError(t, os.WriteFile(file, []byte("1.1.1.1\n"), 0o600))
	hint := regexp.MustCompile(`read it with synthient (lookup ips --file \S+) \(or synthient ([a-z ]+ -) < \S+\)`)
	tests := []struct {
		name, command string
		args          []string
	}{
		{"lookup ips FILE", "lookup ips", []string{"lookup", "ips", file}},
		{"lookup ips ADDR FILE", "lookup ips", []string{"lookup", "ips", "8.8.8.8", file}},
		{"lookup ip FILE", "lookup ip", []string{"lookup", "ip", file}},
		{"lookup ip FILE ADDR", "lookup ip", []string{"lookup", "ip", file, "8.8.8.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, tt.args...)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, `"`+file+`" is a file, not an IP address: read it with synthient lookup ips --file `+file+
				` (or synthient `+tt.command+` - < `+file+`)`)
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs)+srv.Arrivals(synthienttest.RouteLookupIP), "lookups sent")
			m := hint.FindStringSubmatch(r.Stderr)
			require.NotNil(t, m, "the hint")
			// The commands of the hint read the file.
			r = clitest.RunSrv(t, srv, strings.Fields(m[1])...)
			clitest.RequireCode(t, r, 0, m[1])
			c := clitest.Against(srv, strings.Fields(m[2])...)
			c.Stdin = strings.NewReader("1.1.1.1\n")
			r = c.Run(t)
			clitest.RequireCode(t, r, 0, m[2])
		})
	}
}

// lookup ips parses and checks its flags (bulk.go's check) before
// anything runs (its runF seam): the defaults, each flag into its option,
// and the combinations that cannot run refused with a usage error.
func TestIPsParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	same := filepath.Join(dir, "same.txt")
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, o *lookup.BulkOptions)
		err   string
	}{
		{name: "defaults", args: []string{"1.1.1.1"}, check: func(t *testing.T, o *lookup.BulkOptions) {
			t.Helper()
			assert.Equal(t, []string{"1.1.1.1"}, o.Addrs)
			assert.Equal(t, synthient.DefaultBulkConcurrency, o.Concurrency)
			assert.Equal(t, synthient.MaxBatchSize, o.BatchSize)
			assert.False(t, o.KeepDuplicates || o.DryRun || o.ResendUnknown, "a flag not given is set")
			_, limited := o.MaxCredits.Limit()
			assert.False(t, limited, "--max-credits not given")
		}},
		{name: "--max-credits", args: []string{"1.1.1.1", "--max-credits", "0"}, check: func(t *testing.T, o *lookup.BulkOptions) {
			t.Helper()
			n, limited := o.MaxCredits.Limit()
			assert.True(t, limited)
			assert.Zero(t, n)
		}},
		{name: "--max-credits negative", args: []string{"1.1.1.1", "--max-credits", "-1"}, err: `invalid argument "-1" for "--max-credits" flag: want a whole number of credits, 0 or more`},
		{name: "--max-credits not a number", args: []string{"1.1.1.1", "--max-credits", "1e3"}, err: `invalid argument "1e3" for "--max-credits" flag`},
		{name: "every flag", args: []string{"--file", "in.txt", "--concurrency", "3", "--batch-size", "10", "--dry-run",
			"--failed", "f.txt", "--unknown", "u.txt", "--journal", "run.journal", "--resend-unknown"},
			check: func(t *testing.T, o *lookup.BulkOptions) {
				t.Helper()
				assert.Equal(t, "in.txt", o.File)
				assert.Empty(t, o.Addrs)
				assert.Equal(t, 3, o.Concurrency)
				assert.Equal(t, 10, o.BatchSize)
				assert.True(t, o.DryRun && o.ResendUnknown, "--dry-run, --resend-unknown")
				assert.Equal(t, []string{"f.txt", "u.txt", "run.journal"}, []string{o.Failed, o.Unknown, o.Journal})
			}},
		{name: "addresses and --file", args: []string{"--file", "in.txt", "1.1.1.1"}, err: "lookup ips takes addresses or --file, not both"},
		{name: "a line break in an address", args: []string{"1.1.1.1\n8.8.8.8"}, err: "an address argument holds a line break"},
		{name: "--batch-size over 1000", args: []string{"1.1.1.1", "--batch-size", "1001"}, err: "--batch-size must be 1 to 1000, not 1001"},
		{name: "--concurrency 0", args: []string{"1.1.1.1", "--concurrency", "0"}, err: "--concurrency must be 1 to"},
		{name: "--resend-unknown alone", args: []string{"1.1.1.1", "--resend-unknown"}, err: "--resend-unknown sends again what --journal holds"},
		{name: "--journal and --keep-duplicates", args: []string{"1.1.1.1", "--journal", "j", "--keep-duplicates"}, err: "it cannot be combined with --keep-duplicates"},
		{name: "--failed and --unknown the same file", args: []string{"1.1.1.1", "--failed", same, "--unknown", same}, err: "are the same file: name two files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seam clitest.Seam[lookup.BulkOptions]
			err := clitest.Parse(t, lookup.NewCmdIPs(clitest.Factory(iostreams.System{}), seam.RunF), tt.args...)
			if !seam.Parsed(t, err, tt.err) {
				return
			}
			assert.Equal(t, "lookup ips", seam.Got.Command)
			tt.check(t, seam.Got)
		})
	}
}

// --max-credits N: a bulk run sends what fits in N and stops at the first
// request that does not; the rest is not sent, listed in --failed, and the
// run exits 3. The fake's credits are the truth: it never took more than
// N.
func TestBulkMaxCredits(t *testing.T) {
	t.Parallel()
	addrs := clitest.Addrs(5)
	tests := []struct {
		max      string
		lookedUp int // the first addresses, in requests of 2 sent one at a time
	}{
		{"0", 0},
		{"1", 0}, // a request of 2 addresses costs 2
		{"3", 2},
		{"5", 5}, // 2 + 2 + 1
	}
	for _, tt := range tests {
		t.Run("max "+tt.max, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			failed, _, files := clitest.OutFiles(t)
			c := clitest.BatchCall(srv, strings.Join(addrs, "\n")+"\n",
				append([]string{"--batch-size", "2", "--concurrency", "1", "--max-credits", tt.max}, files...)...)
			r := c.Run(t)
			s := clitest.ParseSummary(t, r.Stderr)
			assert.Equal(t, int64(tt.lookedUp), s.LookedUp, "looked up")
			assert.Equal(t, int64(len(addrs)-tt.lookedUp), s.NotSent, "not sent")
			assert.Equal(t, addrs[:tt.lookedUp], append([]string{}, clitest.NDJSONIPs(t, r.Stdout)...))
			spent := synthienttest.DefaultCredits - srv.Credits(srv.APIKey)
			assert.Equal(t, s.Credits, spent, "the summary's credits are the fake's")
			if tt.lookedUp == len(addrs) {
				clitest.RequireCode(t, r, clierr.OK, c.Args...)
				assert.Nil(t, clitest.FileLines(t, failed), "--failed")
				return
			}
			clitest.RequireCode(t, r, clierr.API, c.Args...)
			assert.Equal(t, addrs[tt.lookedUp:], clitest.FileLines(t, failed), "--failed: the addresses not sent")
			assert.Contains(t, r.Stderr, "not sent, safe to send again")
			assert.Contains(t, r.Stderr, "refused by the credit budget (request not sent): credit budget exhausted: 2 credits needed, ")
		})
	}
}

// --max-credits on a single lookup: one that does not fit is not sent
// (exit 3); one that fits is.
func TestSingleLookupMaxCredits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args  []string
		route string
	}{
		{[]string{"lookup", "ip", "8.8.8.8"}, synthienttest.RouteLookupIP},
		{[]string{"lookup", "8.8.8.8"}, synthienttest.RouteLookupIP},
		{[]string{"lookup", "domain", "example.com"}, synthienttest.RouteLookupDomain},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, append(tt.args, "--max-credits", "0")...)
			clitest.RequireFails(t, r, clierr.API, "refused by the credit budget (request not sent): credit budget exhausted: 1 credit needed, 0 left of 0")
			assert.Zero(t, srv.Arrivals(tt.route), "requests sent")
			r = clitest.RunSrv(t, srv, append(tt.args, "--max-credits", "1")...)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Equal(t, int64(synthienttest.DefaultCredits-1), srv.Credits(srv.APIKey))
		})
	}
}
