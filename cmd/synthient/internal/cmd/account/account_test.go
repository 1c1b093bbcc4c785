package account_test

import (
	"testing"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of account.go: the account command.

// The text output of account matches its golden file.
func TestGoldenAccount(t *testing.T) {
	t.Parallel()
	clitest.CheckGolden(t, []clitest.GoldenCase{
		{Name: "account", Args: []string{"account"}},
	})
}
