package config_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// setProfile, in its environment, makes the test binary a process that
// keeps a key for this profile in the store of the directory storeDir,
// without a keychain, once its stdin ends: the logins of
// TestStoreConcurrentProcesses.
const (
	setProfile = "SYNTHIENT_CONFIG_TEST_SET_PROFILE"
	storeDir   = "SYNTHIENT_CONFIG_TEST_STORE_DIR"
)

func TestMain(m *testing.M) {
	if p := os.Getenv(setProfile); p != "" {
		os.Exit(keepFor(p, os.Getenv(storeDir)))
	}
	goleak.VerifyTestMain(m)
}

// keepFor keeps profile's key in the store of dir, once stdin ends (all
// the processes start, then all are let go at once), and returns the
// exit code.
func keepFor(profile, dir string) int {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := &config.Store{Keychain: &clitest.Keychain{Err: errors.New("no keychain")}, Dir: dir}
	if _, _, err := s.Set(profile, config.Kept{Key: "key-of-" + profile, Host: config.DefaultHost}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
