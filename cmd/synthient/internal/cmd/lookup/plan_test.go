package lookup_test

import (
	"fmt"
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
		{"csv", []string{"-o", "csv"}, false, []string{"addresses,invalid,duplicates,distinct,requests,credits,credits_left,fits,journal",
			fmt.Sprintf("5,1,1,3,2,3,%d,true,", synthienttest.DefaultCredits)}, clierr.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			failed, unknown, files := clitest.OutFiles(t)
			c := clitest.Against(srv, append(append(tt.flags, "lookup", "ips", "--file", "-", "--dry-run", "--batch-size", "2"), files...)...)
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
