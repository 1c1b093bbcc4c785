package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of http.go in-process (white-box): what a test cannot reach on
// loopback, a request that arrived on another interface.

func TestListenAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, listen, name string
		loopback           bool
	}{
		{":8765", "127.0.0.1:8765", "", true},
		{"8765", "127.0.0.1:8765", "", true},
		{"localhost:8765", "localhost:8765", "", true},
		{"127.0.0.2:8765", "127.0.0.2:8765", "", true},
		{"[::1]:8765", "[::1]:8765", "", true},
		{"0.0.0.0:8765", "0.0.0.0:8765", "", false},
		{"[::]:8765", "[::]:8765", "", false},
		{"192.0.2.10:8765", "192.0.2.10:8765", "", false},
		{"mcp.example.com:8765", "mcp.example.com:8765", "mcp.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			listen, loopback, name, err := listenAddr(tt.addr)
			require.NoError(t, err)
			assert.Equal(t, tt.listen, listen)
			assert.Equal(t, tt.loopback, loopback)
			assert.Equal(t, tt.name, name)
		})
	}
	for _, bad := range []string{"", "host", "1.2.3.4", "99999"} {
		_, _, _, err := listenAddr(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// On an interface other than loopback, the Host and Origin must be the
// address the request arrived on, or a name of --allow-host (or of
// --http).
func TestHostGuardOffLoopback(t *testing.T) {
	t.Parallel()
	g := &hostGuard{names: map[string]bool{"mcp.example.com": true}, next: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})}
	tests := []struct {
		name, local, host, origin string
		status                    int
	}{
		{"its address", "192.0.2.10:8765", "192.0.2.10:8765", "", http.StatusNoContent},
		{"its name", "192.0.2.10:8765", "MCP.example.com:8765", "", http.StatusNoContent},
		{"its IPv6 address", "[2001:db8::10]:8765", "[2001:db8::10]:8765", "", http.StatusNoContent},
		{"another address", "192.0.2.10:8765", "192.0.2.11:8765", "", http.StatusForbidden},
		{"a rebound name", "192.0.2.10:8765", "attacker.example:8765", "", http.StatusForbidden},
		{"localhost, off loopback", "192.0.2.10:8765", "localhost:8765", "", http.StatusForbidden},
		{"its origin", "192.0.2.10:8765", "mcp.example.com", "https://mcp.example.com", http.StatusNoContent},
		{"another origin", "192.0.2.10:8765", "mcp.example.com", "https://attacker.example", http.StatusForbidden},
		{"on loopback, the SDK checks the Host", "127.0.0.1:8765", "attacker.example", "", http.StatusNoContent},
		{"on loopback, a loopback origin", "127.0.0.1:8765", "127.0.0.1:8765", "http://[::1]:8765", http.StatusNoContent},
		{"on loopback, another origin", "127.0.0.1:8765", "127.0.0.1:8765", "http://attacker.example:8765", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			local, err := net.ResolveTCPAddr("tcp", tt.local)
			require.NoError(t, err)
			r := httptest.NewRequestWithContext(context.WithValue(t.Context(), http.LocalAddrContextKey, local), http.MethodPost, "/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			assert.Equal(t, tt.status, w.Code, w.Body.String())
		})
	}
}
