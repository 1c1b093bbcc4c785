package api_test

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

// api sends a path with the key and prints its JSON, which --jq shapes;
// --input sends a body (POST), from a file or stdin.
func TestAPI(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "api", "account/me", "--jq", ".email")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "grace@example.com\n", r.Stdout)

	r = clitest.RunSrv(t, srv, "api", "/feeds/proxies/export?limit=2", "--jq", ".feeds[].id")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"2026-06-10/13", "2026-06-10/12"}, clitest.Lines(r.Stdout))

	file := filepath.Join(t.TempDir(), "ips.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"ips": ["1.1.1.1", "8.8.8.8"]}`), 0o600))
	r = clitest.RunSrv(t, srv, "api", "lookup/ips", "--input", file, "--jq", ".results[].ip")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, clitest.Lines(r.Stdout))
	c := clitest.Against(srv, "api", "-X", "POST", "lookup/ips", "--input", "-")
	c.Stdin = strings.NewReader(`{"ips":["9.9.9.9"]}`)
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, `"ip":"9.9.9.9"`)
}

// A billed route keeps the billed rules: a 503 on a lookup is not sent
// again; an API error is the command's error, exit 3.
func TestAPIBilled(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r := clitest.RunSrv(t, srv, "api", "lookup/ip/8.8.8.8")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "503 Service Unavailable")
	assert.Contains(t, r.Stderr, "may_have_been_processed")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "not sent again")

	r = clitest.RunSrv(t, srv, "api", "no/such/route")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "404 Not Found")
}

// A path outside the base URL, and --input that is not JSON, are refused
// before anything is sent.
func TestAPIRefuses(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	// After the parallel subtests, before the fake closes.
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent") })
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("ips=1.1.1.1"), 0o600))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"api", "https://evil.example/api/v4/account/me"}, `"https://evil.example/api/v4/account/me" is not a path below the base URL ` + srv.URL},
		{[]string{"api", "../health"}, "leaves the base URL"},
		{[]string{"api", "lookup/ips", "--input", bad}, "--input " + bad + " is not JSON"},
		{[]string{"api"}, "missing PATH: api takes PATH"},
		{[]string{"-o", "csv", "api", "account/me"}, "--output csv applies to"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := clitest.RunSrv(t, srv, tt.args...)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
		})
	}
}

// A stream's lines are printed as they come; a download's redirect is not
// followed, and its presigned URL not printed.
func TestAPIStreamAndRedirect(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t, synthienttest.WithMaxEvents(3))
	r := clitest.RunSrv(t, srv, "api", "feeds/proxies/stream", "--jq", ".ip | length > 0")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"true", "true", "true"}, clitest.Lines(r.Stdout))

	r = clitest.RunSrv(t, srv, "api", "feeds/proxies/export/latest")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "307 Temporary Redirect: the answer is a redirect to the storage host, not followed")
	assert.NotContains(t, r.Stderr, srv.StorageURL, "the presigned URL")
	assert.Zero(t, srv.Arrivals(synthienttest.RouteStorage))
}
