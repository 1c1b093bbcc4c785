//go:build unix

package safefile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/safefile"
)

// Open refuses what a hostile path may hold instead of a regular file,
// at once: a named pipe no one writes (for reading and for writing,
// which open(2) would wait on), a link to a device.
func TestOpenRefusesAtOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, kind string
		flag       int
		make       func(t *testing.T, path string)
	}{
		{"a named pipe, to read", "a named pipe", os.O_RDONLY, mkfifo},
		{"a named pipe, to write", "a named pipe", os.O_RDWR | os.O_CREATE, mkfifo},
		{"a link to /dev/zero", "a character device", os.O_RDONLY, func(t *testing.T, path string) {
			t.Helper()
			require.NoError(t, os.Symlink("/dev/zero", path))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "f")
			tt.make(t, path)
			f, fi, err := safefile.Open(path, tt.flag, 0o600)
			var nr *safefile.NotRegularError
			require.ErrorAs(t, err, &nr)
			assert.Nil(t, f)
			assert.Nil(t, fi)
			assert.Equal(t, path+": not a regular file ("+tt.kind+")", err.Error())
		})
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o600))
}
