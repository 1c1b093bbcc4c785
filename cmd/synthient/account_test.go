package main

// Tests of account.go: the account and health commands.

import (
	"testing"
	"time"

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

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{999 * time.Millisecond, "now"},
		{time.Second, "1 second"},
		{42 * time.Second, "42 seconds"},
		{time.Minute + 3*time.Second, "1 minute 3 seconds"},
		{5 * time.Hour, "5 hours"},
		{5*time.Hour + 59*time.Second, "5 hours"},
		{24 * time.Hour, "1 day"},
		{730*time.Hour + 46*time.Minute + 57*time.Second, "30 days 10 hours"},
		{489*time.Hour + 40*time.Minute, "20 days 9 hours"},
	} {
		t.Run(tt.d.String(), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, humanDuration(tt.d))
		})
	}
}
