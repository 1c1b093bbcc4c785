package health_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// The text output of health matches its golden file.
func TestGoldenHealth(t *testing.T) {
	t.Parallel()
	clitest.CheckGolden(t, []clitest.GoldenCase{{Name: "health", Args: []string{"health"}}})
}

// An unhealthy API: health exits 3 and says why.
func TestHealthUnhealthy(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.SetUnhealthy("database unreachable")
	r := clitest.RunSrv(t, srv, "health")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "503", "stderr")
	assert.Contains(t, r.Stderr, "database unreachable", "stderr")
}
