package main

// Tests of account.go: the account and health commands.

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The text output of account and health matches its golden file.
func TestGoldenAccount(t *testing.T) {
	t.Parallel()
	checkGolden(t, []goldenCase{
		{"account", []string{"account"}},
		{"health", []string{"health"}},
	})
}

// An unhealthy API: health exits 3 and says why.
func TestHealthUnhealthy(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.SetUnhealthy("database unreachable")
	r := runSrv(t, srv, "health")
	requireCode(t, r, exitAPI)
	assert.Contains(t, r.stderr, "503", "stderr")
	assert.Contains(t, r.stderr, "database unreachable", "stderr")
}
