package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const source = "package p\n\nvar x = 1 == 2\n"

// mutantOf is the == of source made !=, in a file of mode 0600 in a
// directory of its own.
func mutantOf(t *testing.T) mutant {
	t.Helper()
	file := filepath.Join(t.TempDir(), "p.go")
	require.NoError(t, os.WriteFile(file, []byte(source), 0o600))
	return mutant{file: file, off: len("package p\n\nvar x = 1 "), from: "==", to: "!=", line: 3}
}

// The test runs on the mutant, and the file is then as it was: its text
// and its mode.
func TestApplyRestores(t *testing.T) {
	t.Parallel()
	m := mutantOf(t)
	o, err := apply(m, func() (outcome, error) {
		b, err := os.ReadFile(m.file)
		require.NoError(t, err)
		assert.Equal(t, "package p\n\nvar x = 1 != 2\n", string(b), "the text the test runs on")
		return killed, nil
	})
	require.NoError(t, err)
	assert.Equal(t, killed, o)
	b, err := os.ReadFile(m.file)
	require.NoError(t, err)
	assert.Equal(t, source, string(b), "the file after the run")
	fi, err := os.Stat(m.file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the file's mode after the run")
}

// A file that cannot be written back is an error naming the mutant, not
// a mutant counted: the pass must not go on with a mutated source.
func TestApplyRestoreFails(t *testing.T) {
	t.Parallel()
	m := mutantOf(t)
	_, err := apply(m, func() (outcome, error) {
		// A directory in the file's place: no write to it succeeds,
		// also as root.
		require.NoError(t, os.Remove(m.file))
		require.NoError(t, os.Mkdir(m.file, 0o700))
		return survived, nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "restoring "+m.file+", which may hold the mutant "+m.String())
}

// A source that changed since its sites were found is refused, and left
// as it is.
func TestApplySourceChanged(t *testing.T) {
	t.Parallel()
	m := mutantOf(t)
	m.off++
	_, err := apply(m, func() (outcome, error) {
		assert.Fail(t, "the test ran on a source that changed")
		return killed, nil
	})
	require.ErrorContains(t, err, "source changed under the run")
	b, err := os.ReadFile(m.file)
	require.NoError(t, err)
	assert.Equal(t, source, string(b))
}
