package lookup_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// --dry-run reads and checks the input, prints what the run would send
// and cost, and the credits left (a free request); no lookup is sent and
// no output file created. Invalid lines are reported and counted as in a
// run.
func TestBatchDryRun(t *testing.T) {
	t.Parallel()
	in := "1.1.1.1\n8.8.8.8\nnope\n1.1.1.1\n9.9.9.9\n"
	tests := []struct {
		name   string
		flags  []string
		noKey  bool
		stdout []string
		code   int
	}{
		{"text", nil, false, []string{"Addresses     5", "Invalid       1", "Duplicates    1", "Distinct      3", "Requests      2", "Credits       3",
			fmt.Sprintf("Credits left  %d (enough)", synthienttest.DefaultCredits)}, clierr.OK},
		{"json", []string{"-o", "json"}, false, []string{fmt.Sprintf(
			`{"addresses":5,"invalid":1,"duplicates":1,"distinct":3,"requests":2,"credits":3,"credits_left":%d,"fits":true}`, synthienttest.DefaultCredits)}, clierr.OK},
		{"no key", nil, true, []string{"Addresses   5", "Invalid     1", "Duplicates  1", "Distinct    3", "Requests    2", "Credits     3"}, clierr.OK},
		{"csv", []string{"-o", "csv"}, false, []string{"addresses,invalid,duplicates,distinct,requests,credits,credits_left,fits,journal,max_credits,fits_max_credits",
			fmt.Sprintf("5,1,1,3,2,3,%d,true,,,", synthienttest.DefaultCredits)}, clierr.OK},
		{"max credits fit", []string{"--max-credits", "3"}, true, []string{"Addresses    5", "Invalid      1", "Duplicates   1", "Distinct     3", "Requests     2",
			"Credits      3", "Max credits  3 (fits)"}, clierr.OK},
		{"max credits do not fit", []string{"-o", "json", "--max-credits", "2"}, true, []string{
			`{"addresses":5,"invalid":1,"duplicates":1,"distinct":3,"requests":2,"credits":3,"max_credits":2,"fits_max_credits":false}`}, clierr.OK},
		{"max credits csv", []string{"-o", "csv", "--max-credits", "0"}, true, []string{"addresses,invalid,duplicates,distinct,requests,credits,credits_left,fits,journal,max_credits,fits_max_credits",
			"5,1,1,3,2,3,,,,0,false"}, clierr.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			failed, unknown, files := clitest.OutFiles(t)
			c := clitest.Against(srv, append(append([]string{"lookup", "ips", "--file", "-", "--dry-run", "--batch-size", "2"}, files...), tt.flags...)...)
			if tt.noKey {
				c.Env = nil
			}
			c.Stdin = strings.NewReader(in)
			r := c.Run(t)
			clitest.RequireCode(t, r, tt.code, c.Args...)
			assert.Equal(t, tt.stdout, clitest.Lines(r.Stdout), "stdout")
			assert.Contains(t, r.Stderr, `synthient: line 3: "nope" is not an IP address`, "stderr")
			assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs)+srv.Arrivals(synthienttest.RouteLookupIP), "lookups sent")
			assert.NoFileExists(t, failed, "--failed")
			assert.NoFileExists(t, unknown, "--unknown")
		})
	}
}

// With a journal, --dry-run weighs what the rest of the run would spend
// against --max-credits; a run stopped by --max-credits resumes from its
// journal, sending only what it did not.
func TestDryRunMaxCreditsWithJournal(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	journal := filepath.Join(t.TempDir(), "run.journal")
	addrs := clitest.Addrs(15)
	in := strings.Join(addrs, "\n") + "\n"
	run := func(flags ...string) clitest.Result {
		c := clitest.BatchCall(srv, in, append([]string{"--journal", journal, "--batch-size", "5", "--concurrency", "1"}, flags...)...)
		return c.Run(t)
	}
	r := run("--max-credits", "5") // the first request of 5 (5 credits), then stopped
	clitest.RequireCode(t, r, clierr.API)
	assert.Equal(t, addrs[:5], clitest.NDJSONIPs(t, r.Stdout))

	r = run("--dry-run", "--max-credits", "9")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, `"journal":5,"invalid":0,"duplicates":0,"distinct":10,"requests":2,"credits":10,`)
	assert.Contains(t, r.Stdout, `"max_credits":9,"fits_max_credits":false}`)
	r = run("--dry-run", "--max-credits", "10")
	assert.Contains(t, r.Stdout, `"max_credits":10,"fits_max_credits":true}`)

	r = run("--max-credits", "10")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, addrs[5:], clitest.NDJSONIPs(t, r.Stdout), "the rest, sent once")
	assert.Equal(t, int64(synthienttest.DefaultCredits-15), srv.Credits(srv.APIKey))
	clitest.AssertChargedOnce(t, srv)
}
