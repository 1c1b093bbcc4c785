package fakeserver_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of knobs.go: the flags that set the fake up.

// serve starts fake-server with flags and returns its base URL and key;
// it stops when the test ends.
func serve(t *testing.T, flags ...string) (base, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := clitest.Call{Args: append([]string{"fake-server"}, flags...), Ctx: ctx, Stdout: &clitest.SyncBuffer{}}
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	t.Cleanup(func() {
		cancel()
		clitest.RequireCode(t, <-done, clierr.Interrupt) // stopped by its interrupt, as every command
	})
	require.Eventually(t, func() bool {
		_, _, ok := fakeServerNotice(c.Stdout.String(), "text")
		return ok
	}, 2*time.Minute, 10*time.Millisecond, "the notice")
	base, key, _ = fakeServerNotice(c.Stdout.String(), "text")
	assert.Contains(t, c.Stdout.String(), "setup:       credits ", "the notice says how it is set up")
	return base, key
}

// run runs args against the fake at base.
func run(t *testing.T, base, key string, args ...string) clitest.Result {
	t.Helper()
	return clitest.RunArgs(t, map[string]string{"SYNTHIENT_BASE_URL": base, "SYNTHIENT_API_KEY": key}, args...)
}

// --credits, --fault, --seed, --rate-limit off and --export-size set the
// fake up as they say.
func TestFakeServerKnobs(t *testing.T) {
	t.Parallel()
	base, key := serve(t, "--credits", "5", "--seed", "7", "--rate-limit", "off", "--export-size", "64K",
		"--fault", "lookup-ip=503@2", "--fault", "/account/me=502")
	for i := range 2 {
		r := run(t, base, key, "lookup", "ip", "8.8.8.8")
		clitest.RequireCode(t, r, clierr.API)
		assert.Contains(t, r.Stderr, "503 Service Unavailable", "lookup %d meets its fault", i+1)
	}
	clitest.RequireCode(t, run(t, base, key, "lookup", "ip", "8.8.8.8"), clierr.OK, "the third lookup")
	r := run(t, base, key, "--max-retries", "0", "account")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "502 Bad Gateway")
	r = run(t, base, key, "--max-retries", "0", "account", "--jq", ".lookup_quota.credits")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "4\n", r.Stdout, "5 credits, the one lookup answered charged")

	r = run(t, base, key, "exports", "meta", "proxies", "latest", "--jq", ".size")
	clitest.RequireCode(t, r, clierr.OK)
	size, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	require.NoError(t, err)
	assert.InDelta(t, 64<<10, size, 0.25*(64<<10), "--export-size 64K")

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/account/me", nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close() // only the headers matter here
	assert.Empty(t, resp.Header.Get("RateLimit-Limit"), "--rate-limit off: no RateLimit headers")

	defaultBase, defaultKey := serve(t)
	seeded := run(t, base, key, "-o", "json", "lookup", "ip", "81.2.69.142")
	plain := run(t, defaultBase, defaultKey, "-o", "json", "lookup", "ip", "81.2.69.142")
	clitest.RequireCode(t, seeded, clierr.OK)
	clitest.RequireCode(t, plain, clierr.OK)
	assert.NotEqual(t, plain.Stdout, seeded.Stdout, "--seed 7 answers other data")
}

// --latency holds every answer: a call with a shorter timeout fails.
func TestFakeServerLatency(t *testing.T) {
	t.Parallel()
	base, key := serve(t, "--latency", "1h")
	r := run(t, base, key, "--timeout", "50ms", "--max-retries", "0", "account")
	clitest.RequireCode(t, r, clierr.Connection)
	assert.Contains(t, r.Stderr, "timed out")
}

// Knobs that cannot be are usage errors, before anything is served.
func TestFakeServerKnobsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--fault", "lookup-ips"}, "--fault lookup-ips: no ="},
		{[]string{"--fault", "nowhere=503"}, `unknown route "nowhere"`},
		{[]string{"--fault", "account=teapot"}, `unknown fault "teapot"`},
		{[]string{"--fault", "account=700"}, `unknown fault "700"`},
		{[]string{"--fault", "account=503@0"}, "the count after @ is a number from 1, or all"},
		{[]string{"--fault", "account=slow-headers:soon"}, "the wait after : is a duration"},
		{[]string{"--rate-limit", "maybe"}, `--rate-limit is on or off, not "maybe"`},
		{[]string{"--export-size", "huge"}, "--export-size huge: not a size"},
		{[]string{"--credits", "-1"}, "must not be negative"},
	} {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			t.Parallel()
			r := clitest.RunArgs(t, nil, append([]string{"fake-server"}, tt.flags...)...)
			clitest.RequireCode(t, r, clierr.Usage)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Empty(t, r.Stdout)
		})
	}
}
