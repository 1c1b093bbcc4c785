package batch_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// A finished run's journal cut at every record boundary and in the middle
// of every record, as a crash would leave it, then resumed against a new
// fake: the resumed run sends exactly the addresses the whole records do
// not hold as sent, prints exactly those, files the ones sent and not
// answered in --unknown, and counts the ones looked up as looked up
// earlier.
func TestJournalCutAnywhereResumes(t *testing.T) {
	t.Parallel()
	in := clitest.Addrs(40)
	input := strings.Join(in, "\n") + "\n"
	dir := t.TempDir()
	r := journalRun(t, clitest.NewServer(t), dir, input)
	clitest.RequireCode(t, r, clierr.OK)
	data, err := os.ReadFile(filepath.Join(dir, "run.journal")) //nolint:gosec // the journal of the run above, in the test's directory
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	require.Len(t, lines, 1+4+40, "the header, a sent record per request of 10, a done record per address")

	var cuts []int
	end := 0
	for _, l := range lines {
		cuts = append(cuts, end, end+len(l)/2)
		end += len(l)
	}
	cuts = append(cuts, end)
	for _, cut := range cuts {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			t.Parallel()
			lookedUp, sent := wholeRecords(t, data[:cut])
			var fresh []string
			for _, ip := range in {
				if !sent[ip] {
					fresh = append(fresh, ip)
				}
			}
			var unknown []string
			for _, ip := range in {
				if sent[ip] && !lookedUp[ip] {
					unknown = append(unknown, ip)
				}
			}
			rdir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(rdir, "run.journal"), data[:cut], 0o600)) //nolint:gosec // the subtest's temporary directory
			srv := clitest.NewServer(t)
			r := journalRun(t, srv, rdir, input)
			want := clierr.OK
			if len(unknown) > 0 {
				want = clierr.API
			}
			clitest.RequireCode(t, r, want)
			clitest.AssertAddrs(t, fresh, clitest.NDJSONIPs(t, r.Stdout), "printed")
			var charged []string
			for _, ip := range srv.ChargedIPs() {
				charged = append(charged, ip.String())
			}
			clitest.AssertAddrs(t, fresh, charged, "charged")
			clitest.AssertAddrs(t, unknown, clitest.FileLines(t, filepath.Join(rdir, "unknown.txt")), "--unknown")
			s := clitest.ParseSummary(t, r.Stderr)
			assert.Equal(t, clitest.Summary{Read: 40, LookedUp: int64(len(fresh)), Earlier: int64(len(lookedUp)), Unknown: int64(len(unknown)),
				Credits: s.Credits}, s, "summary")
		})
	}
}

// wholeRecords reads the whole records of a journal's bytes as the test
// sees them: the addresses looked up, and those sent.
func wholeRecords(t *testing.T, data []byte) (lookedUp, sent map[string]bool) {
	t.Helper()
	lookedUp, sent = map[string]bool{}, map[string]bool{}
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if !bytes.HasSuffix(l, []byte("\n")) {
			break // cut short
		}
		var rec struct {
			T, IP, O string
			IPs      []string
		}
		require.NoError(t, json.Unmarshal(l[9:], &rec), "record %q", l)
		switch rec.T {
		case "sent":
			for _, ip := range rec.IPs {
				sent[netip.MustParseAddr(ip).String()] = true
			}
		case "done":
			if rec.O == "looked_up" {
				lookedUp[rec.IP] = true
			}
		}
	}
	for ip := range lookedUp {
		require.True(t, sent[ip], "%s was looked up and never sent", ip)
	}
	return lookedUp, sent
}
