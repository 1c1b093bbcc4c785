package config_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
		where, kerr, err := s.Set("default", kept("k1"))
		require.NoError(t, err)
		assert.NoError(t, kerr)
		assert.True(t, where.Keychain)
		_, _, err = s.Set("staging", kept("k2"))
		require.NoError(t, err)
		k, where, err := s.Get("staging")
		require.NoError(t, err)
		assert.Equal(t, kept("k2"), k)
		assert.Equal(t, "the system keychain (service synthient)", where.String())
		assert.NoFileExists(t, s.CredentialsPath(), "nothing in the file")
		was, err := s.Delete("default")
		require.NoError(t, err)
		assert.Equal(t, []config.Where{{Keychain: true}}, was)
		k, _, err = s.Get("default")
		require.NoError(t, err)
		assert.Equal(t, config.Kept{}, k)
	})
	t.Run("no keychain", func(t *testing.T) {
		t.Parallel()
		noKeychain := errors.New("no Secret Service")
		s := &config.Store{Keychain: &clitest.Keychain{Err: noKeychain}, Dir: filepath.Join(t.TempDir(), "synthient")}
		where, kerr, err := s.Set("default", kept("k1"))
		require.NoError(t, err)
		require.ErrorIs(t, kerr, noKeychain)
		assert.Equal(t, s.CredentialsPath(), where.Path)
		fi, err := os.Stat(s.CredentialsPath())
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		_, _, err = s.Set("staging", kept("k2"))
		require.NoError(t, err)
		k, _, err := s.Get("default")
		require.NoError(t, err)
		assert.Equal(t, kept("k1"), k)
		was, err := s.Delete("default")
		require.NoError(t, err)
		assert.Equal(t, []config.Where{{Path: s.CredentialsPath()}}, was)
		k, _, _ = s.Get("staging")
		assert.Equal(t, kept("k2"), k, "the other profile's key stays")
		entries, err := os.ReadDir(s.Dir)
		require.NoError(t, err)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		assert.Equal(t, []string{"credentials.toml", "credentials.toml.lock"}, names, "no temporary file left")

		require.NoError(t, os.Chmod(s.CredentialsPath(), 0o644)) //nolint:gosec // readable by others, which the store refuses: the point of the test
		_, _, err = s.Get("staging")
		var fe *config.FileError
		require.ErrorAs(t, err, &fe)
		assert.Contains(t, err.Error(), "others can read it (mode 0644)")
	})
	t.Run("neither", func(t *testing.T) {
		t.Parallel()
		s := &config.Store{Keychain: &clitest.Keychain{Err: errors.New("none")}}
		_, _, err := s.Set("default", kept("k"))
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
	where, kerr, err := s.Set("default", kept("secret"))
	require.NoError(t, err)
	require.EqualError(t, kerr, "no keychain")
	assert.False(t, where.Keychain, "the file, as on a server without a keychain")
	keyring.MockInit()
}

// kept is key bound to a host of the tests.
func kept(key string) config.Kept {
	return config.Kept{Key: key, Host: "https://h.example"}
}

// A key is kept with the host it is bound to, in the keychain and in the
// file; one kept before keys had a host is bound to the default host and
// says so; a keychain entry this version cannot read is an error.
func TestStoreHost(t *testing.T) {
	t.Parallel()
	legacy := config.Kept{Key: "old", Host: config.DefaultHost, Unbound: true}
	t.Run("keychain", func(t *testing.T) {
		t.Parallel()
		kc := &clitest.Keychain{}
		s := &config.Store{Keychain: kc, Dir: t.TempDir()}
		_, _, err := s.Set("p", config.Kept{Key: "k", Host: "http://127.0.0.1:8080"})
		require.NoError(t, err)
		secret, err := kc.Get(config.Service, "p")
		require.NoError(t, err)
		assert.JSONEq(t, `{"api_key":"k","host":"http://127.0.0.1:8080"}`, secret, "the host is kept with the key")
		k, _, err := s.Get("p")
		require.NoError(t, err)
		assert.Equal(t, config.Kept{Key: "k", Host: "http://127.0.0.1:8080"}, k)

		require.NoError(t, kc.Set(config.Service, "p", "old"))
		k, _, err = s.Get("p")
		require.NoError(t, err)
		assert.Equal(t, legacy, k, "a bare key, kept before")

		require.NoError(t, kc.Set(config.Service, "p", `{"api_key":`))
		_, _, err = s.Get("p")
		require.ErrorContains(t, err, "the system keychain's entry of profile p (service synthient): not a key this version can read")
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		s := &config.Store{Keychain: &clitest.Keychain{Err: errors.New("none")}, Dir: t.TempDir()}
		_, _, err := s.Set("p", kept("k"))
		require.NoError(t, err)
		b, err := os.ReadFile(s.CredentialsPath())
		require.NoError(t, err)
		assert.Contains(t, string(b), "[profiles.p]\n    api_key = \"k\"\n    host = \"https://h.example\"\n")

		require.NoError(t, os.WriteFile(s.CredentialsPath(), []byte("[profiles.p]\napi_key = \"old\"\n"), 0o600))
		k, _, err := s.Get("p")
		require.NoError(t, err)
		assert.Equal(t, legacy, k, "an entry without a host, kept before")
	})
}

// Logins of many profiles at once, without a keychain, each keep their
// key: the file is read, changed and replaced under a lock. Before the
// lock, 10 goroutines kept 4 to 9 of 10 keys.
func TestStoreConcurrentSet(t *testing.T) {
	t.Parallel()
	s := &config.Store{Keychain: &clitest.Keychain{Err: errors.New("no keychain")}, Dir: filepath.Join(t.TempDir(), "synthient")}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			_, _, err := s.Set(fmt.Sprint("p", i), kept(fmt.Sprint("k", i)))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for i := range 10 {
		k, _, err := s.Get(fmt.Sprint("p", i))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("k", i), k.Key, "the key of profile p%d", i)
	}
}

// The same with 10 processes (this test binary, run as keepFor), let go
// at once: the lock is an flock, which holds across processes.
func TestStoreConcurrentProcesses(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "synthient")
	var cmds []*exec.Cmd
	var gates []io.Closer
	for i := range 10 {
		cmd := exec.CommandContext(t.Context(), exe) //nolint:gosec // this test binary, run as keepFor
		cmd.Env = append(os.Environ(), setProfile+"=p"+fmt.Sprint(i), storeDir+"="+dir)
		gate, err := cmd.StdinPipe()
		require.NoError(t, err)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("process p%d: %s", i, out.String())
			}
		})
		cmds, gates = append(cmds, cmd), append(gates, gate)
	}
	for _, g := range gates {
		require.NoError(t, g.Close()) // all go
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	s := &config.Store{Keychain: &clitest.Keychain{Err: errors.New("no keychain")}, Dir: dir}
	for i := range 10 {
		k, _, err := s.Get(fmt.Sprint("p", i))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("key-of-p", i), k.Key, "the key of profile p%d", i)
	}
}

// The official Synthient CLI keeps its key in the keychain under service
// synthient, account token: the default profile reads it when it has no
// key of its own, bound to the default host; no profile is named token,
// and nothing here writes or removes that entry. Before, a profile named
// token read it as its own, and Set replaced it (the official CLI then
// sent a JSON document as its key).
func TestStoreOfficialKey(t *testing.T) {
	t.Parallel()
	keychain := &clitest.Keychain{}
	require.NoError(t, keychain.Set("synthient", "token", "official-key\n"))
	s := &config.Store{Keychain: keychain, Dir: filepath.Join(t.TempDir(), "synthient")}
	official := func() {
		t.Helper()
		v, err := keychain.Get("synthient", "token")
		require.NoError(t, err)
		assert.Equal(t, "official-key\n", v, "the official CLI's entry is as it kept it")
	}

	k, where, err := s.Get("default")
	require.NoError(t, err)
	assert.Equal(t, config.Kept{Key: "official-key", Host: config.DefaultHost, Official: true}, k)
	assert.Equal(t, "the official Synthient CLI's entry in the system keychain (service synthient, account token)", where.String())
	k, _, err = s.Get("staging")
	require.NoError(t, err)
	assert.Equal(t, config.Kept{}, k, "another profile")

	_, _, err = s.Set("token", kept("k1"))
	require.ErrorContains(t, err, "profile token: the name is taken by the official Synthient CLI's key in the system keychain (service synthient, account token)")
	_, _, err = s.Get("token")
	require.Error(t, err)
	_, err = s.Delete("token")
	require.Error(t, err)
	official()

	_, _, err = s.Set("default", kept("own"))
	require.NoError(t, err)
	k, where, err = s.Get("default")
	require.NoError(t, err)
	assert.Equal(t, kept("own"), k, "the profile's own key first")
	assert.False(t, where.Official)
	was, err := s.Delete("default")
	require.NoError(t, err)
	assert.Equal(t, []config.Where{{Keychain: true}}, was, "the profile's own key only")
	official()
	k, _, err = s.Get("default")
	require.NoError(t, err)
	assert.True(t, k.Official, "the official key again")
}
