package clierr_test

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

// Errors speak in the command line's terms: no SDK method name or "invalid
// argument", and the value or flag that fixes them.
func TestErrorsInCLITerms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "p.parquet")
	require.NoError(t, os.WriteFile(existing, []byte("old"), 0o600))
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"domain", []string{"--fake", "lookup", "domain", "a/b"}, `synthient: domain holds '/' (see 'synthient lookup domain --help', https://github.com/synthient-go/synthient/blob/main/docs/cli.md#commands)`},
		{"file exists", []string{"--fake", "exports", "download", "proxies", "latest", "--out", existing},
			"synthient: " + existing + " exists and is not proxies "},
		{"base URL", []string{"--api-key", "k", "--base-url", "ht!tp://x", "account"},
			`synthient: base URL does not parse: "ht!tp://x" (--base-url or SYNTHIENT_BASE_URL: an absolute http(s) URL ending in /api/v4, such as https://api.synthient.com/api/v4)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.Call{Args: tt.args}.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.NotRegexp(t, `invalid argument|Lookup|Download|NewClient`, r.Stderr)
		})
	}
}

// A 404 from a base URL that does not end in /api/v4 says so.
func TestNotFoundBaseURLHint(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	base := strings.TrimSuffix(srv.URL, "/api/v4")
	r := clitest.Call{Args: []string{"--api-key", srv.APIKey, "--base-url", base, "account"}}.Run(t)
	clitest.RequireCode(t, r, clierr.API, "account")
	assert.Contains(t, r.Stderr, "404 Not Found")
	assert.Contains(t, r.Stderr, `the base URL "`+base+`" does not end in /api/v4`)

	missing := clitest.RunSrv(t, srv, "exports", "meta", "proxies", "2020-01-01")
	clitest.RequireCode(t, missing, clierr.API, "exports meta")
	assert.Contains(t, missing.Stderr, "404 Not Found")
	assert.NotContains(t, missing.Stderr, "base URL", "a 404 of the right base URL has no hint")
}

// The SDK's count of attempts of a download adds up its legs (the meta,
// the API's redirect, the storage request): an error after three
// requests of one attempt each says "3 requests", not "3 attempts"; a
// call of one request keeps its attempts.
func TestDownloadErrorsCountRequests(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	c := clitest.Against(srv, "exports", "download", "proxies", "--out", "-")
	c.StdoutTo = clitest.FailWriter{Err: clitest.ErrNoSpace}
	r := c.Run(t)
	assert.Regexp(t, `\(3 requests\)\n$`, r.Stderr, "a writer that fails after the meta, the redirect and the storage request")

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 503})
	r = clitest.RunSrv(t, srv, "exports", "download", "proxies", "--out", filepath.Join(t.TempDir(), "p.parquet"))
	clitest.RequireCode(t, r, clierr.API)
	assert.Regexp(t, `503 Service Unavailable.*, 3 requests, not_retryable\)\n$`, r.Stderr)
	assert.NotContains(t, r.Stderr, "attempt")

	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r = clitest.RunSrv(t, srv, "lookup", "ip", "8.8.8.8")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "1 attempt(s), may_have_been_processed)")
}
