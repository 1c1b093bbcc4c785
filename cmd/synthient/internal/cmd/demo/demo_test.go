package demo_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of demo.go: the guided demo.

// The guided demo runs on its own fake, shows a retry and refused retries
// with their reasons, and ends well under a minute.
func TestDemo(t *testing.T) {
	t.Parallel()
	r := clitest.Call{Args: []string{"demo"}}.Run(t)
	clitest.RequireCode(t, r, 0, "demo")
	for _, want := range []string{
		"retry in",
		"stop: may_have_been_processed",
		"retry_after_exceeds_max",
		"429", "503", "502",
		"distinct addresses: 1250 looked up, 1000 unknown, 0 not sent; 1 invalid; 249 repeats",
		"credits: 1125 spent, 900 possibly spent; the fake charged 1125",
		"AllExports walked",
		"verified; API key sent to storage: false",
		"exports.Open(path).Proxies(), the first of ",
		"Done in",
	} {
		assert.Contains(t, r.Stdout, want, "demo output")
	}
	assert.Empty(t, r.Stderr, "stderr")
	assert.Less(t, r.Elapsed, 5*time.Minute, "the demo hangs") // a bound only a hang outlasts
}
