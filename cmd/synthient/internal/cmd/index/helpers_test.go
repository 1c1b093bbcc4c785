package index_test

// The harness of the index commands: the fake on its fixed clock, and the
// rows of its exports read with package exports, to compare with.

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// download downloads feed's export id of srv to a temporary file.
func download(t *testing.T, srv *synthienttest.Server, feed synthient.Feed, id string) string {
	t.Helper()
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	path := filepath.Join(t.TempDir(), string(feed)+".parquet")
	_, err = c.DownloadExportFile(context.Background(), feed, id, path, &synthient.DownloadParams{Verify: true})
	require.NoError(t, err)
	return path
}

// latestByIP returns, of the proxies rows of the file at path, the latest
// row of each address (of equal times the later).
func latestByIP(t *testing.T, path string) map[string]exports.ProxyRow {
	t.Helper()
	f, err := exports.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]exports.ProxyRow{}
	for r, err := range f.Proxies() {
		require.NoError(t, err)
		if old, ok := out[r.IP]; !ok || r.Timestamp >= old.Timestamp {
			out[r.IP] = r
		}
	}
	return out
}

// newServer is the fake of the index tests: on the fixed clock, without
// rate limits.
func newServer(t *testing.T, opts ...synthienttest.Option) *synthienttest.Server {
	t.Helper()
	return clitest.NewServer(t, append([]synthienttest.Option{synthienttest.WithoutRateLimits()}, opts...)...)
}
