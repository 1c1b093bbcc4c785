package redis_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// quiet is a go-redis logger that logs nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// TestMain starts the redis-server that the examples and most tests share,
// and fails the whole run when there is none: the module's tests need a
// real Redis, and a missing one must fail CI, never skip.
func TestMain(m *testing.M) {
	// go-redis logs each failed dial; the tests kill servers on purpose.
	goredis.SetLogger(quiet{})
	srv, err := startServer("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "synthient/redis tests:", err)
		os.Exit(1)
	}
	shared = srv
	// The shared server lives past the check for leaks: its goroutine,
	// running now, is none. Cleanup replaces goleak's os.Exit, so it
	// exits itself, with goleak's code.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent(), goleak.Cleanup(func(code int) {
		srv.kill()
		os.Exit(code)
	}))
}
