package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of read.go: the settings files a cloned repository, or anything
// else, may make hostile.

// hostile makes the file at path one that must not be read whole nor
// waited on, and returns what the refusal says of it.
type hostile struct {
	name string
	make func(t *testing.T, path string)
	says string
}

var hostiles = []hostile{
	{"a link to /dev/zero", func(t *testing.T, path string) {
		t.Helper()
		require.NoError(t, os.Symlink("/dev/zero", path))
	}, "not a regular file (a character device): refused"},
	{"a sparse 64 GiB file", func(t *testing.T, path string) {
		t.Helper()
		f, err := os.Create(path) //nolint:gosec // the test's own file
		require.NoError(t, err)
		require.NoError(t, f.Truncate(64<<30)) // no byte written: sparse
		require.NoError(t, f.Close())
	}, "larger than 1048576 bytes: refused"},
	{"a named pipe", func(t *testing.T, path string) {
		t.Helper()
		clitest.MakeFIFO(t, path)
	}, "not a regular file (a named pipe): refused"},
	{"a directory", func(t *testing.T, path string) {
		t.Helper()
		require.NoError(t, os.Mkdir(path, 0o700))
	}, "not a regular file (a directory): refused"},
}

// Each settings file the CLI reads (.env, config.toml, credentials.toml)
// that is not a regular file, or is over its limit, is refused with exit
// 2 naming it: it is never read whole (a link to /dev/zero, a sparse
// file of 64 GiB) nor waited on (a named pipe, opened with O_NONBLOCK).
// Before, the command read /dev/zero and the sparse file until memory
// ran out, and hung on the named pipe.
func TestHostileSettingsFiles(t *testing.T) {
	t.Parallel()
	files := []struct {
		name string
		// path returns where the file goes for a run in work with the
		// configuration directory home.
		path func(work, home string) string
	}{
		{".env", func(work, _ string) string { return filepath.Join(work, ".env") }},
		{"config.toml", func(_, home string) string { return filepath.Join(home, "synthient", "config.toml") }},
		{"credentials.toml", func(_, home string) string { return filepath.Join(home, "synthient", "credentials.toml") }},
	}
	for _, file := range files {
		for _, h := range hostiles {
			t.Run(file.name+"/"+h.name, func(t *testing.T) {
				t.Parallel()
				srv := clitest.NewServer(t)
				work, home := t.TempDir(), t.TempDir()
				require.NoError(t, os.Mkdir(filepath.Join(home, "synthient"), 0o700))
				path := file.path(work, home)
				h.make(t, path)
				r := clitest.Call{Args: []string{"--base-url", srv.URL, "account"}, Dir: work,
					Env: map[string]string{"XDG_CONFIG_HOME": home}}.Run(t)
				clitest.RequireCode(t, r, clierr.Usage)
				assert.Equal(t, "synthient: "+path+": "+h.says+"\n", r.Stderr)
				assert.Empty(t, srv.Requests(), "requests sent")
			})
		}
	}
}

// --api-key-file names a file the user chose: a pipe or a named pipe is
// read (it may wait for its writer, until Ctrl-C: see
// TestAPIKeyFileInterrupted), but a device, a directory or a file over
// 4 KiB is refused (exit 2, naming it) and never read past 4 KiB.
func TestHostileAPIKeyFile(t *testing.T) {
	t.Parallel()
	for _, h := range hostiles {
		if h.name == "a named pipe" {
			continue
		}
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			path := filepath.Join(t.TempDir(), "key")
			h.make(t, path)
			r := clitest.Call{Args: []string{"--base-url", srv.URL, "--api-key-file", path, "account"}}.Run(t)
			clitest.RequireCode(t, r, clierr.Usage)
			assert.Contains(t, r.Stderr, "synthient: --api-key-file: "+path+" is ")
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}
