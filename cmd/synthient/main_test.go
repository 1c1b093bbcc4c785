package main

// The package's tests run the command in-process: see helpers_test.go for
// the harness. Each *_test.go file tests the source file of its name.

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
