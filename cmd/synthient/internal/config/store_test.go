package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zalando/go-keyring"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// With a keychain, keys go there, one per profile; without one (a
// headless server), to credentials.toml, mode 0600, which Get reads and
// Delete cleans; a file others can read is refused.
func TestStore(t *testing.T) {
	t.Parallel()
	t.Run("keychain", func(t *testing.T) {
		t.Parallel()
		s := &config.Store{Keychain: &clitest.Keychain{}, Dir: t.TempDir()}
		where, kerr, err := s.Set("default", "k1")
		require.NoError(t, err)
		assert.NoError(t, kerr)
		assert.True(t, where.Keychain)
		_, _, err = s.Set("staging", "k2")
		require.NoError(t, err)
		key, where, err := s.Get("staging")
		require.NoError(t, err)
		assert.Equal(t, "k2", key)
		assert.Equal(t, "the system keychain (service synthient)", where.String())
		assert.NoFileExists(t, s.CredentialsPath(), "nothing in the file")
		was, err := s.Delete("default")
		require.NoError(t, err)
		assert.Equal(t, []config.Where{{Keychain: true}}, was)
		key, _, err = s.Get("default")
		require.NoError(t, err)
		assert.Empty(t, key)
	})
	t.Run("no keychain", func(t *testing.T) {
		t.Parallel()
		noKeychain := errors.New("no Secret Service")
		s := &config.Store{Keychain: &clitest.Keychain{Err: noKeychain}, Dir: filepath.Join(t.TempDir(), "synthient")}
		where, kerr, err := s.Set("default", "k1")
		require.NoError(t, err)
		require.ErrorIs(t, kerr, noKeychain)
		assert.Equal(t, s.CredentialsPath(), where.Path)
		fi, err := os.Stat(s.CredentialsPath())
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		_, _, err = s.Set("staging", "k2")
		require.NoError(t, err)
		key, _, err := s.Get("default")
		require.NoError(t, err)
		assert.Equal(t, "k1", key)
		was, err := s.Delete("default")
		require.NoError(t, err)
		assert.Equal(t, []config.Where{{Path: s.CredentialsPath()}}, was)
		key, _, _ = s.Get("staging")
		assert.Equal(t, "k2", key, "the other profile's key stays")
		entries, err := os.ReadDir(s.Dir)
		require.NoError(t, err)
		assert.Len(t, entries, 1, "no temporary file left: %v", entries)

		require.NoError(t, os.Chmod(s.CredentialsPath(), 0o644)) //nolint:gosec // readable by others, which the store refuses: the point of the test
		_, _, err = s.Get("staging")
		var fe *config.FileError
		require.ErrorAs(t, err, &fe)
		assert.Contains(t, err.Error(), "others can read it (mode 0644)")
	})
	t.Run("neither", func(t *testing.T) {
		t.Parallel()
		s := &config.Store{Keychain: &clitest.Keychain{Err: errors.New("none")}}
		_, _, err := s.Set("default", "k")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "set HOME or XDG_CONFIG_HOME")
	})
}

// SystemKeychain is go-keyring: checked on go-keyring's own mock. Not
// parallel: the mock is the whole process's.
//
//nolint:paralleltest // see above
func TestSystemKeychain(t *testing.T) {
	keyring.MockInit()
	k := config.SystemKeychain{}
	_, err := k.Get(config.Service, "default")
	require.ErrorIs(t, err, config.ErrNotFound)
	require.NoError(t, k.Set(config.Service, "default", "secret"))
	v, err := k.Get(config.Service, "default")
	require.NoError(t, err)
	assert.Equal(t, "secret", v)
	require.NoError(t, k.Delete(config.Service, "default"))
	require.ErrorIs(t, k.Delete(config.Service, "default"), config.ErrNotFound)

	keyring.MockInitWithError(errors.New("no keychain"))
	s := &config.Store{Keychain: k, Dir: t.TempDir()}
	where, kerr, err := s.Set("default", "secret")
	require.NoError(t, err)
	require.EqualError(t, kerr, "no keychain")
	assert.False(t, where.Keychain, "the file, as on a server without a keychain")
	keyring.MockInit()
}
