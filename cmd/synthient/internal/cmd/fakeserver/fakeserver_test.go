package fakeserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of fakeserver.go: the fake-server command.

// fakeServerNotice returns the base URL and key fake-server printed on
// out, in output ("text" or "json"), once it printed them whole.
func fakeServerNotice(out, output string) (base, key string, ok bool) {
	if output == "json" {
		var v struct {
			BaseURL string `json:"base_url"`
			APIKey  string `json:"api_key"`
		}
		if !strings.HasSuffix(out, "\n") || json.Unmarshal([]byte(out), &v) != nil {
			return "", "", false
		}
		return v.BaseURL, v.APIKey, true
	}
	m := regexp.MustCompile(`base URL:\s+(\S+)\nAPI key:\s+(\S+)\n`).FindStringSubmatch(out)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// fake-server prints its base URL and key, serves them until interrupted,
// then exits 130, as every command interrupted does.
func TestFakeServer(t *testing.T) {
	t.Parallel()
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := clitest.Call{Args: []string{"-o", output, "fake-server", "--listen", "127.0.0.1:0"}, Ctx: ctx, Stdout: &clitest.SyncBuffer{}}
			done := make(chan clitest.Result, 1)
			go func() { done <- c.Run(t) }()

			require.Eventually(t, func() bool {
				_, _, ok := fakeServerNotice(c.Stdout.String(), output)
				return ok
			}, 2*time.Minute, 10*time.Millisecond, "the base URL")
			base, key, _ := fakeServerNotice(c.Stdout.String(), output)
			assert.True(t, strings.HasPrefix(base, "http://127.0.0.1:") && strings.HasSuffix(base, "/api/v4"), "base URL %q", base)

			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Minute}
			get := func(path, key string) (int, string) {
				t.Helper()
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
				require.NoError(t, err)
				if key != "" {
					req.Header.Set("X-Api-Key", key)
				}
				resp, err := hc.Do(req)
				require.NoError(t, err, "GET %s", path)
				defer resp.Body.Close() //nolint:errcheck // read to its end below: Close says nothing more
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			code, body := get("/health", "")
			assert.Equal(t, 200, code, "GET /health: %s", body)
			assert.Contains(t, body, `"ok"`, "GET /health")
			code, body = get("/account/me", key)
			assert.Equal(t, 200, code, "GET /account/me with the printed key: %s", body)
			assert.Contains(t, body, "Grace", "GET /account/me with the printed key")

			// The printed values work for the command itself.
			r := clitest.RunArgs(t, map[string]string{"SYNTHIENT_BASE_URL": base, "SYNTHIENT_API_KEY": key}, "lookup", "ip", "1.1.1.1")
			clitest.RequireCode(t, r, 0)

			select {
			case r := <-done:
				require.FailNow(t, "fake-server ended before the interrupt", "exit %d, stderr %s", r.Code, r.Stderr)
			case <-time.After(50 * time.Millisecond):
			}
			cancel()
			select {
			case r := <-done:
				clitest.RequireCode(t, r, clierr.Interrupt)
				assert.Equal(t, "synthient: interrupted\n", r.Stderr, "stderr")
			case <-time.After(2 * time.Minute):
				require.FailNow(t, "fake-server did not stop within 2 minutes of the interrupt")
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/health", nil)
			require.NoError(t, err)
			resp, err := hc.Do(req)
			if err == nil {
				_ = resp.Body.Close() // an answer, which the assertion below reports
			}
			assert.Error(t, err, "the fake still answers after fake-server returned")
		})
	}
}

// fake-server on an address in use exits 2.
func TestFakeServerListenBusy(t *testing.T) {
	t.Parallel()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close() //nolint:errcheck // it only holds the address: nothing was accepted
	r := clitest.RunArgs(t, nil, "fake-server", "--listen", ln.Addr().String())
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, "cannot listen on "+ln.Addr().String(), "stderr")
}

// fake-server prints its key even when SYNTHIENT_API_KEY holds it (from an
// earlier run: the fake's key is the same every time): it is no secret.
func TestFakeServerPrintsItsKey(t *testing.T) {
	t.Parallel()
	probe := synthienttest.NewServer()
	key := probe.APIKey
	probe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // fake-server prints, then stops at once
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			r := clitest.Call{Args: []string{"-o", output, "fake-server", "--listen", "127.0.0.1:0"}, Ctx: ctx,
				Env: map[string]string{"SYNTHIENT_API_KEY": key}}.Run(t)
			clitest.RequireCode(t, r, clierr.Interrupt)
			assert.Contains(t, r.Stdout, key, "stdout does not show the fake's key")
			assert.NotContains(t, r.Stdout, redact.Redacted, "stdout redacts the fake's key")
		})
	}
}
