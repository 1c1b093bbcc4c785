package index_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// TestFollow keeps an index file fresh until both feeds' newest hourly
// exports were added and their streams opened, then interrupts it: the
// file it saved holds the exports and the streams' events, and no credit
// was spent.
func TestFollow(t *testing.T) {
	t.Parallel()
	srv := newServer(t, synthienttest.WithEventInterval(5*time.Millisecond))
	idx := filepath.Join(t.TempDir(), "feeds.synidx")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &clitest.SyncBuffer{}
	done := make(chan clitest.Result, 1)
	call := clitest.Against(srv, "index", "follow", "--index", idx, "--feed", "proxies", "--feed", "anonymizers",
		"--poll", "20ms", "--save-every", "100ms", "--max-age", "0")
	call.Ctx, call.Stderr = ctx, stderr
	go func() { done <- call.Run(t) }()
	guard := time.After(time.Minute) // against a hang, not a measure
	for _, line := range []string{"proxies export added 2026-06-10/13", "anonymizers export added 2026-06-10/13",
		"proxies stream opened", "anonymizers stream opened"} {
		for !strings.Contains(stderr.String(), line) {
			select {
			case <-guard:
				t.Fatalf("no %q after a minute:\n%s", line, stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // some events more
	cancel()
	r := <-done
	clitest.RequireCode(t, r, clierr.Interrupt, "index follow, interrupted")
	r = clitest.RunSrv(t, srv, "index", "stats", idx, "-o", "json")
	clitest.RequireCode(t, r, 0, "index stats")
	var doc struct {
		Feeds []struct {
			Feed    string   `json:"feed"`
			Updated int64    `json:"updated"`
			Exports []string `json:"exports"`
		} `json:"feeds"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	for _, f := range doc.Feeds {
		if f.Feed == "ja4t" {
			assert.Empty(t, f.Exports)
			continue
		}
		assert.Equal(t, []string{"2026-06-10/13"}, f.Exports, f.Feed)
		assert.Equal(t, clitest.TestNow.Unix(), f.Updated, "%s: the stream's events, of the fake's now", f.Feed)
	}
	assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey), "no credit spent")
}
