package mcp_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of http.go: synthient mcp --http.

// initialize is the body of an MCP initialize request.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends initialize to url with the headers of hdr (Host: the Host),
// and returns the status and body.
func post(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initialize))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close() //nolint:errcheck // read to its end below
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// A request whose Host or Origin is not the server's is refused (DNS
// rebinding: a page whose name now points at 127.0.0.1); the server's
// own are served.
func TestHostAndOrigin(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, nil, "--fake")
	port := h.url[strings.LastIndex(h.url, ":")+1 : strings.LastIndex(h.url, "/")]
	tests := []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"the server's address", nil, http.StatusOK},
		{"localhost", map[string]string{"Host": "localhost:" + port}, http.StatusOK},
		{"a rebound name", map[string]string{"Host": "attacker.example:" + port}, http.StatusForbidden},
		{"a private address", map[string]string{"Host": "192.168.1.10:" + port}, http.StatusForbidden},
		{"the server's origin", map[string]string{"Origin": "http://127.0.0.1:" + port}, http.StatusOK},
		{"a localhost origin", map[string]string{"Origin": "http://localhost:" + port}, http.StatusOK},
		{"another site's origin", map[string]string{"Origin": "https://attacker.example"}, http.StatusForbidden},
		{"a rebound name's origin", map[string]string{"Origin": "http://attacker.example:" + port}, http.StatusForbidden},
		{"a null origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := post(t, h.url, tt.hdr)
			assert.Equal(t, tt.status, status, "body: %s", body)
			if tt.status == http.StatusForbidden {
				assert.Contains(t, body, "Forbidden: invalid ")
			}
		})
	}
}

// With --token-file every request must send the token as a bearer token:
// one without it, or with another, is refused; the go-sdk's client with
// it is served.
func TestBearerToken(t *testing.T) {
	t.Parallel()
	const token = "4f6c1d0e9b8a7c6d5e4f3a2b1c0d9e8f" //nolint:gosec // the test's own token
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(token+"\n"), 0o600))
	h := startHTTP(t, nil, "--fake", "--token-file", file)
	for name, hdr := range map[string]map[string]string{
		"no token":           nil,
		"another token":      {"Authorization": "Bearer " + strings.ToUpper(token)},
		"a prefix":           {"Authorization": "Bearer " + token[:16]},
		"not a bearer token": {"Authorization": "Basic " + token},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			status, body := post(t, h.url, hdr)
			assert.Equal(t, http.StatusUnauthorized, status, "body: %s", body)
			assert.NotContains(t, body, token)
		})
	}
	t.Run("the token", func(t *testing.T) {
		t.Parallel()
		hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
		cs := h.connect(t, &gomcp.StreamableClientTransport{HTTPClient: hc})
		res := call(t, cs, "list_feed_streams", nil)
		assert.False(t, res.IsError, "%s", text(res))
	})
	assert.NotContains(t, h.stderr.String(), token, "stderr shows the token")
}

// bearer sends its token with every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// An interrupt stops the server, also with a session open (and its
// stream of server messages): it exits 0.
func TestHTTPInterrupt(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, nil, "--fake")
	cs := h.connect(t, nil)
	_, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.NoError(t, h.stop(), "stderr:\n%s", h.stderr)
	_, err = cs.ListTools(context.Background(), nil)
	assert.Error(t, err, "a server that was stopped answered")
}
