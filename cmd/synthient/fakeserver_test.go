package main

import (
	"context"
	"strings"
	"testing"

	"github.com/synthient-go/synthient/synthienttest"
)

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
		r := call{args: []string{"-o", output, "fake-server", "--listen", "127.0.0.1:0"}, ctx: ctx,
			env: map[string]string{"SYNTHIENT_API_KEY": key}}.run(t)
		wantCode(t, r, 0)
		if !strings.Contains(r.stdout, key) || strings.Contains(r.stdout, redacted) {
			t.Errorf("-o %s: stdout does not show the fake's key %s:\n%s", output, key, r.stdout)
		}
	}
}
