package exports_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// A server's cursor is printed as one shell word in the "more:" hint, so
// that pasting the hint runs nothing else.
func TestExportsListCursorHintQuoted(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.Call{Args: []string{"--base-url", clitest.HostileFront(t, srv), "exports", "list", "proxies", "--limit", "2"}, Env: clitest.KeyEnv(srv)}.Run(t)
	clitest.RequireCode(t, r, 0)
	ls := clitest.Lines(r.Stdout)
	require.NotEmpty(t, ls, "stdout")
	last := ls[len(ls)-1]
	assert.True(t, strings.HasPrefix(last, "more: --cursor '") && strings.HasSuffix(last, "' (or --all)"), "hint %q: the cursor is not single-quoted", last)
}

// The text output of exports list and meta matches its golden file.
func TestGoldenExports(t *testing.T) {
	t.Parallel()
	clitest.CheckGolden(t, []clitest.GoldenCase{
		{Name: "exports_list", Args: []string{"exports", "list", "proxies"}},
		{Name: "exports_list_page", Args: []string{"exports", "list", "honeypot_http", "--limit", "3"}},
		{Name: "exports_list_all", Args: []string{"exports", "list", "proxies", "--limit", "5", "--all"}},
		{Name: "exports_meta_latest", Args: []string{"exports", "meta", "proxies", "latest"}},
		{Name: "exports_meta_daily", Args: []string{"exports", "meta", "ja4t", "2026-06-09"}},
		{Name: "exports_meta_hourly", Args: []string{"exports", "meta", "helio/dns", "2026-06-10/07"}},
	})
}
