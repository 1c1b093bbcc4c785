package root_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// An argument shaped like a key, or equal to the configured key, is never
// echoed, on stdout or stderr, by cobra's errors, the CLI's own or the
// SDK's: it is printed as [redacted].
func TestKeyArgumentNeverEchoed(t *testing.T) {
	t.Parallel()
	const pasted = clitest.PastedKey
	const configured = "sk_live_not_a_uuid_0123456789" // a key of another shape
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(configured+"\n"), 0o600))
	addrFile := filepath.Join(dir, "addrs")
	require.NoError(t, os.WriteFile(addrFile, []byte(pasted+"\n"), 0o600))
	headerFile := filepath.Join(dir, "header")
	require.NoError(t, os.WriteFile(headerFile, []byte("x-api-key: "+pasted+"\n"), 0o600))
	out := filepath.Join(dir, "f.parquet")
	tests := []struct {
		name   string
		args   []string
		envKey string // SYNTHIENT_API_KEY; the fake's key when empty
		secret string
		code   int
	}{
		{"account KEY", []string{"account", pasted}, "", pasted, clierr.Usage},
		{"KEY alone", []string{pasted}, "", pasted, clierr.Usage},
		{"help KEY", []string{"help", pasted}, "", pasted, clierr.OK},
		{"lookup KEY", []string{"lookup", pasted}, "", pasted, clierr.Usage},
		{"lookup ip KEY", []string{"lookup", "ip", pasted}, "", pasted, clierr.Usage},
		{"flag value", []string{"lookup", "domain", "example.com", "--limit", pasted}, "", pasted, clierr.Usage},
		{"--flag=KEY", []string{"--timeout=" + pasted, "account"}, "", pasted, clierr.Usage},
		{"--output KEY", []string{"--output", pasted, "account"}, "", pasted, clierr.Usage},
		{"exports list KEY", []string{"exports", "list", pasted}, "", pasted, clierr.Usage},
		{"SDK: export id", []string{"exports", "meta", "proxies", pasted}, "", pasted, clierr.Usage},
		{"SDK: download id", []string{"exports", "download", "proxies", pasted, "--out", out}, "", pasted, clierr.Usage},
		{"stream KEY", []string{"stream", pasted}, "", pasted, clierr.Usage},
		{"key line in the address file", []string{"lookup", "ips", "--file", addrFile}, "", pasted, clierr.Usage},
		{"--api-key KEY, then KEY", []string{"--api-key", configured, "account", configured}, "", configured, clierr.Usage},
		{"SYNTHIENT_API_KEY, then KEY", []string{"account", configured}, configured, configured, clierr.Usage},
		{"--api-key-file, then KEY", []string{"--api-key-file", keyFile, "account", configured}, "", configured, clierr.Usage},
		{"--api-key-file, then KEY to the CLI", []string{"--api-key-file", keyFile, "lookup", "ip", configured}, "", configured, clierr.Usage},
		// cobra finds an unknown command before it parses the flags.
		{"--api-key KEY, KEY as the command", []string{"--api-key", configured, configured}, "", configured, clierr.Usage},
		{"--api-key=KEY, KEY as the command", []string{"--api-key=" + configured, configured}, "", configured, clierr.Usage},
		{"-api-key=KEY alone", []string{"-api-key=" + configured}, "", configured, clierr.Usage},
		{"--api-key-file, KEY as the command", []string{"--api-key-file", keyFile, configured}, "", configured, clierr.Usage},
		{"--api-key-file=, KEY as the command", []string{"--api-key-file=" + keyFile, configured}, "", configured, clierr.Usage},
		// A key glued to something else.
		{"NAME=KEY", []string{"SYNTHIENT_API_KEY=" + pasted}, "", pasted, clierr.Usage},
		{"-oKEY", []string{"-o" + pasted, "account"}, "", pasted, clierr.Usage},
		{"-xKEY", []string{"-x" + pasted}, "", pasted, clierr.Usage},
		{"--KEY", []string{"--" + pasted}, "", pasted, clierr.Usage},
		{"{KEY}", []string{"{" + pasted + "}"}, "", pasted, clierr.Usage},
		{"x-api-key: KEY line in the address file", []string{"lookup", "ips", "--file", headerFile}, "", pasted, clierr.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Against(srv, tt.args...)
			if tt.envKey != "" {
				c.Env = map[string]string{"SYNTHIENT_API_KEY": tt.envKey}
			}
			r := c.Run(t)
			clitest.RequireCode(t, r, tt.code, c.Args...)
			assert.NotContains(t, r.Stdout, tt.secret, "stdout echoes the key")
			assert.NotContains(t, r.Stderr, tt.secret, "stderr echoes the key")
			assert.Contains(t, r.Stdout+r.Stderr, redact.Redacted, "the output")
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}
