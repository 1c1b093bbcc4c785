package repocheck_test

import (
	"testing"

	"go.uber.org/goleak"

	// The packages the docs' Go blocks use. Importing them makes this test
	// binary change when they change, so `go test` does not answer from its
	// cache after an API change that breaks a block.
	_ "github.com/hashicorp/go-retryablehttp"
	_ "github.com/synthient-go/synthient"
	_ "github.com/synthient-go/synthient/exports"
	_ "github.com/synthient-go/synthient/retry"
	_ "github.com/synthient-go/synthient/synthienttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
