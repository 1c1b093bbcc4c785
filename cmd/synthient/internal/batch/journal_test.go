package batch_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/synthienttest"
)

// journalRun is a run of lookup ips on in with a journal and the
// --unknown file of dir, and the flags.
func journalRun(t *testing.T, srv *synthienttest.Server, dir, in string, flags ...string) clitest.Result {
	t.Helper()
	c := clitest.BatchCall(srv, in, append([]string{"--journal", filepath.Join(dir, "run.journal"),
		"--unknown", filepath.Join(dir, "unknown.txt"), "--failed", filepath.Join(dir, "failed.txt"),
		"--batch-size", "10", "--concurrency", "1"}, flags...)...)
	return c.Run(t)
}

// A run with a journal, resumed: what the journal holds as looked up is
// neither sent nor printed again, what it holds as sent and unanswered
// goes to --unknown unsent (the summary and the note before the run say
// so), --resend-unknown sends those, and a run of a finished journal
// sends nothing.
func TestJournalResume(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	in := clitest.Addrs(30)
	input := strings.Join(in, "\n") + "\n" + in[3] + "\n" // a repeat at the end

	srv.Inject(synthienttest.RouteLookupIPs, 1, clitest.PassThrough)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 503})
	r := journalRun(t, srv, dir, input)
	clitest.RequireCode(t, r, clierr.API)
	clitest.AssertAddrs(t, append(slices.Clone(in[:10]), in[20:]...), clitest.NDJSONIPs(t, r.Stdout), "run 1: looked up")
	clitest.AssertAddrs(t, in[10:20], clitest.ReadLines(t, filepath.Join(dir, "unknown.txt")), "run 1: --unknown")
	assert.Equal(t, clitest.Summary{Read: 31, LookedUp: 20, Unknown: 10, Duplicates: 1, Credits: 18, MaybeCredits: 9},
		clitest.ParseSummary(t, r.Stderr), "run 1")
	assert.NotContains(t, r.Stderr, "synthient: journal", "run 1: a new journal holds nothing")

	before := srv.Arrivals(synthienttest.RouteLookupIPs)
	r = journalRun(t, srv, dir, input)
	clitest.RequireCode(t, r, clierr.API)
	assert.Empty(t, r.Stdout, "run 2 prints nothing again")
	assert.Equal(t, before, srv.Arrivals(synthienttest.RouteLookupIPs), "run 2 sends nothing")
	assert.Equal(t, clitest.Summary{Read: 31, Earlier: 20, Unknown: 10, Duplicates: 1}, clitest.ParseSummary(t, r.Stderr), "run 2")
	clitest.AssertAddrs(t, in[10:20], clitest.ReadLines(t, filepath.Join(dir, "unknown.txt")), "run 2: --unknown")
	assert.Contains(t, r.Stderr, "synthient: journal "+filepath.Join(dir, "run.journal")+": from earlier runs, 20 addresses looked up (not sent or printed again), "+
		"10 addresses possibly charged (not sent again, in --unknown), 0 addresses to send again\n")
	assert.Contains(t, r.Stderr, "synthient: lines 11-20: 10 addresses possibly charged (the request may have been processed); do not resend blindly (in --unknown "+
		filepath.Join(dir, "unknown.txt")+"): sent by an earlier run that recorded no answer (in the journal); --resend-unknown sends them again\n")

	r = journalRun(t, srv, dir, input, "--resend-unknown")
	clitest.RequireCode(t, r, clierr.OK)
	clitest.AssertAddrs(t, in[10:20], clitest.NDJSONIPs(t, r.Stdout), "run 3: the unknown ones, sent again")
	assert.Equal(t, clitest.Summary{Read: 31, LookedUp: 10, Earlier: 20, Duplicates: 1, Credits: 9}, clitest.ParseSummary(t, r.Stderr), "run 3")

	before = srv.Arrivals(synthienttest.RouteLookupIPs)
	r = journalRun(t, srv, dir, input)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Empty(t, r.Stdout)
	assert.Equal(t, clitest.Summary{Read: 31, Earlier: 30, Duplicates: 1}, clitest.ParseSummary(t, r.Stderr), "run 4")
	assert.Equal(t, before, srv.Arrivals(synthienttest.RouteLookupIPs), "run 4 sends nothing")
	clitest.AssertChargedOnce(t, srv)
}

// Addresses rejected without a charge (a 422) are safe to send again: the
// resumed run sends them, and only them.
func TestJournalResendsRejected(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	in := clitest.Addrs(20)
	input := strings.Join(in, "\n") + "\n"
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 422})
	r := journalRun(t, srv, dir, input)
	clitest.RequireCode(t, r, clierr.API)
	clitest.AssertAddrs(t, in[:10], clitest.ReadLines(t, filepath.Join(dir, "failed.txt")), "run 1: --failed")

	r = journalRun(t, srv, dir, input)
	clitest.RequireCode(t, r, clierr.OK)
	clitest.AssertAddrs(t, in[:10], clitest.NDJSONIPs(t, r.Stdout), "run 2: the rejected ones")
	assert.Contains(t, r.Stderr, "10 addresses to send again\n")
	assert.Equal(t, clitest.Summary{Read: 20, LookedUp: 10, Earlier: 10, Credits: 9}, clitest.ParseSummary(t, r.Stderr), "run 2")
	clitest.AssertChargedOnce(t, srv)
}

// A run interrupted while its request is out leaves the request's
// addresses possibly charged: the resumed run files them in --unknown
// without sending them.
func TestJournalInterruptedInFlight(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clitest.BatchCall(srv, "1.1.1.1\n8.8.8.8\n", "--journal", filepath.Join(dir, "run.journal"))
	c.Ctx = ctx
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	require.Eventually(t, func() bool { return srv.Arrivals(synthienttest.RouteLookupIPs) == 1 }, 2*time.Minute, 10*time.Millisecond)
	cancel()
	clitest.RequireCode(t, <-done, clierr.Interrupt)

	r := journalRun(t, srv, dir, "1.1.1.1\n8.8.8.8\n")
	clitest.RequireCode(t, r, clierr.API)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, clitest.ReadLines(t, filepath.Join(dir, "unknown.txt")))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "nothing sent again")
}

// --dry-run counts the addresses a journal settles and plans the rest;
// it creates no journal when there is none.
func TestJournalDryRun(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	in := strings.Join(clitest.Addrs(15), "\n") + "\n"
	r := journalRun(t, srv, dir, in, "--dry-run", "-o", "json")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, `"addresses":15,"journal":0,`)
	assert.NoFileExists(t, filepath.Join(dir, "run.journal"))

	c := clitest.BatchCall(srv, strings.Join(clitest.Addrs(5), "\n"), "--journal", filepath.Join(dir, "run.journal"))
	clitest.RequireCode(t, c.Run(t), clierr.OK)
	r = journalRun(t, srv, dir, in, "--dry-run", "-o", "json")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, `{"addresses":15,"journal":5,"invalid":0,"duplicates":0,"distinct":10,"requests":1,"credits":9,`)
}

// A damaged journal, or a file that is not one, is refused (exit 2)
// before anything is sent, and left as it was.
func TestJournalRefused(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	require.NoError(t, os.WriteFile(path, []byte("1.1.1.1\n8.8.8.8\n"), 0o600))
	r := journalRun(t, srv, dir, "1.1.1.1\n")
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Equal(t, "synthient: journal "+path+":1: not a journal of synthient lookups\n", r.Stderr)
	assert.Empty(t, srv.Requests())
	got, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	assert.Equal(t, "1.1.1.1\n8.8.8.8\n", string(got))
}

// A run with a journal whose stdout is a file that a killed run left in
// the middle of a line (opened to append, as >> does) starts a new line:
// its results do not join the part of a line left.
func TestJournalEndsATornLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, before, want string }{
		{"torn", `{"ip":"9.9.9.9","netw`, `{"ip":"9.9.9.9","netw` + "\n"},
		{"whole", "{\"ip\":\"9.9.9.9\"}\n", "{\"ip\":\"9.9.9.9\"}\n"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "out.ndjson")
			require.NoError(t, os.WriteFile(path, []byte(tt.before), 0o600))
			out, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			c := clitest.BatchCall(clitest.NewServer(t), "1.1.1.1\n", "--journal", filepath.Join(dir, "j"))
			c.StdoutTo = out
			clitest.RequireCode(t, c.Run(t), clierr.OK)
			require.NoError(t, out.Close())
			got, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(got), tt.want), "the file starts %q", got)
			assert.Equal(t, []string{"1.1.1.1"}, clitest.NDJSONIPs(t, string(got[len(tt.want):])), "the results after it")
		})
	}
}

// A torn line that cannot be ended (stdout a file that refuses writes)
// stops the run before anything is sent: its results would join the torn
// line, or be lost, and be charged all the same.
func TestJournalTornLineNotWritable(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.ndjson")
	require.NoError(t, os.WriteFile(path, []byte(`{"ip":"9.9.9.9","netw`), 0o600))
	out, err := os.Open(path) //nolint:gosec // the test's file: opened read-only, so that every write fails
	require.NoError(t, err)
	t.Cleanup(func() { _ = out.Close() }) // read-only: nothing to lose
	c := clitest.BatchCall(srv, "1.1.1.1\n", "--journal", filepath.Join(dir, "j"))
	c.StdoutTo = out
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.Failure)
	assert.Contains(t, r.Stderr, "synthient: ending the torn last line of stdout: ", "stderr")
	assert.Empty(t, srv.Requests(), "requests sent")
}

// An IPv4-mapped IPv6 address is the IPv4 address it maps, for the
// journal as for the SDK: a resumed run sends neither spelling of an
// address the journal holds in the other, and counts the second
// spelling as a repeat.
func TestJournalMappedAddresses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, first, second string }{
		{"IPv4 then mapped", "192.0.2.7\n", "::ffff:192.0.2.7\n"},
		{"mapped then IPv4", "::ffff:192.0.2.7\n", "192.0.2.7\n"},
		{"both, resumed with both", "192.0.2.7\n::ffff:192.0.2.7\n", "::ffff:192.0.2.7\n192.0.2.7\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			dir := t.TempDir()
			r := journalRun(t, srv, dir, tt.first)
			clitest.RequireCode(t, r, clierr.OK)
			require.Len(t, clitest.NDJSONIPs(t, r.Stdout), 1, "run 1: one result")

			r = journalRun(t, srv, dir, tt.second)
			clitest.RequireCode(t, r, clierr.OK)
			assert.Empty(t, r.Stdout, "run 2 prints nothing again")
			assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "run 2 sends nothing")
			n := int64(strings.Count(tt.second, "\n"))
			assert.Equal(t, clitest.Summary{Read: n, Earlier: 1, Duplicates: n - 1}, clitest.ParseSummary(t, r.Stderr), "run 2")
			clitest.AssertChargedOnce(t, srv)
		})
	}
}

// A dry run changes nothing on disk: over a journal with a torn last
// record, an empty journal or one whose header was cut short, the file
// keeps its bytes and its modification time; and a dry run over a
// journal another run holds reads it, neither refused nor waiting for
// the lock.
func TestJournalDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	in := clitest.Addrs(15)
	input := strings.Join(in, "\n") + "\n"
	whole := filepath.Join(t.TempDir(), "whole.journal")
	c := clitest.BatchCall(srv, strings.Join(in[:5], "\n")+"\n", "--journal", whole)
	clitest.RequireCode(t, c.Run(t), clierr.OK)
	data, err := os.ReadFile(whole) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	torn := append(bytes.Clone(data), `0badc0de {"t":"sent","ips":["9.9.`...)
	for _, tt := range []struct {
		name    string
		data    []byte
		settled int
	}{
		{"torn last record", torn, 5},
		{"empty", []byte{}, 0},
		{"header cut short", data[:12], 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "run.journal")
			require.NoError(t, os.WriteFile(path, tt.data, 0o600))
			old := time.Date(2020, time.January, 2, 3, 4, 5, 0, time.UTC)
			require.NoError(t, os.Chtimes(path, old, old))
			r := journalRun(t, srv, dir, input, "--dry-run", "-o", "json")
			clitest.RequireCode(t, r, clierr.OK)
			assert.Contains(t, r.Stdout, fmt.Sprintf(`{"addresses":15,"journal":%d,`, tt.settled))
			got, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			assert.Equal(t, tt.data, got, "the journal's bytes")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.True(t, old.Equal(fi.ModTime()), "the journal's modification time: %v", fi.ModTime())
		})
	}
	t.Run("held by another run", func(t *testing.T) {
		t.Parallel()
		j, err := journal.Open(whole)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, j.Close()) })
		c := clitest.BatchCall(srv, input, "--journal", whole, "--dry-run", "-o", "json")
		r := clitest.Bounded(t, c)
		clitest.RequireCode(t, r, clierr.OK)
		assert.Contains(t, r.Stdout, `{"addresses":15,"journal":5,`)
	})
}

// A journal must be a regular file: a named pipe or a device given to
// --journal is refused with exit 2 naming it, by a run and by a dry run,
// before anything is read or sent; neither hangs on a named pipe that no
// one writes.
func TestJournalNotARegularFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, kind string
		make       func(t *testing.T, path string)
	}{
		{"named pipe", "a named pipe", clitest.MakeFIFO},
		{"device", "a device", func(t *testing.T, path string) { require.NoError(t, os.Symlink(os.DevNull, path)) }},
	} {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, dry run %v", tt.name, dry), func(t *testing.T) {
				t.Parallel()
				srv := clitest.NewServer(t)
				path := filepath.Join(t.TempDir(), "run.journal")
				tt.make(t, path)
				flags := []string{"--journal", path}
				if dry {
					flags = append(flags, "--dry-run")
				}
				r := clitest.Bounded(t, clitest.BatchCall(srv, "1.1.1.1\n", flags...))
				clitest.RequireCode(t, r, clierr.Usage)
				assert.Equal(t, "synthient: journal "+path+": not a regular file ("+tt.kind+"): a journal is a regular file\n", r.Stderr)
				assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs), "lookups sent")
			})
		}
	}
}

// A CSV run with a journal, to a stdout that is not a file (a pipe),
// prints the header once per journal: with the first row any run of the
// journal prints. A run that looks nothing up prints nothing, not even
// the header.
func TestJournalCSVHeaderOnce(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	in := clitest.Addrs(30)
	input := strings.Join(in, "\n") + "\n"
	header := string(render.CSVLine(render.IPCSVHeader...))
	run := func(want int) string {
		t.Helper()
		r := journalRun(t, srv, dir, input, "-o", "csv")
		clitest.RequireCode(t, r, want)
		return r.Stdout
	}
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 422})
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 422})
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 422})
	assert.Empty(t, run(clierr.API), "run 1 looks nothing up")

	srv.Inject(synthienttest.RouteLookupIPs, 1, clitest.PassThrough)
	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Status: 422})
	out := run(clierr.API)
	assert.True(t, strings.HasPrefix(out, header), "run 2 begins with the header:\n%s", out)
	assert.Equal(t, 1, strings.Count(out, header), "run 2: headers")
	assert.Len(t, clitest.Lines(out), 1+20, "run 2: the header and 20 rows")

	out = run(clierr.OK)
	assert.NotContains(t, out, header, "run 3")
	assert.Len(t, clitest.Lines(out), 10, "run 3: 10 rows")

	assert.Empty(t, run(clierr.OK), "run 4 has nothing left")
}
