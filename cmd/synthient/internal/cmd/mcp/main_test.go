package mcp_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if built.dir != "" {
			_ = os.RemoveAll(built.dir) // a temporary directory: what is left is the system's to clean
		}
	}))
}
