package index_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// TestStats describes an index of the newest anonymizers export in text:
// its file, and a row per feed with its entries and exports.
func TestStats(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	idx := filepath.Join(t.TempDir(), "feeds.synidx")
	clitest.RequireCode(t, clitest.RunSrv(t, srv, "index", "build", "anonymizers", "--latest", "--out", idx), 0, "index build")
	r := clitest.RunSrv(t, srv, "index", "stats", idx)
	clitest.RequireCode(t, r, 0, "index stats")
	lines := clitest.Lines(r.Stdout)
	require.Len(t, lines, 9, r.Stdout)
	assert.Regexp(t, `^FILE +`+regexp.QuoteMeta(idx)+`$`, lines[0])
	assert.Regexp(t, `^MAX AGE +0s$`, lines[2])
	assert.Regexp(t, `^FEED +IPV4 +IPV6 +LATEST ROW +EXPORTS$`, lines[5])
	assert.Regexp(t, `^proxies +0 +0 +- +-$`, lines[6])
	assert.Regexp(t, `^anonymizers +[1-9][0-9]* +[1-9][0-9]* +2026-06-10T13:[0-9:]+Z +2026-06-10/13$`, lines[8])
}
