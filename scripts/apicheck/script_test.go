package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repo is a git repository of a small module, for runs of apicheck.sh.
type repo struct {
	t   *testing.T
	dir string
}

// newRepo makes a repository with public packages m and m/sub, an internal
// package and a command, a changelog, and a commit of them with their
// record written by apicheck.sh -w.
func newRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.write("go.mod", "module example.com/m\n\ngo 1.25.0\n")
	r.write("m.go", "// Package m is a test.\npackage m\n\n// F is a function.\nfunc F(n int) {}\n")
	r.write("sub/sub.go", "// Package sub is a test.\npackage sub\n\n// T is a type.\ntype T struct{ A int }\n")
	r.write("internal/x/x.go", "package x\n\nfunc Hidden() {}\n")
	r.write("cmd/tool/main.go", "package main\n\nfunc Exported() {}\n\nfunc main() {}\n")
	r.write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Changed\n\n## [0.1.0] - 2026-12-01\n\n- First.\n")
	r.git("init", "-q", "-b", "main")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "Start")
	out, err := r.check("-w")
	require.NoError(t, err, out)
	r.commit("Record the API")
	return r
}

func (r *repo) write(name, text string) {
	r.t.Helper()
	path := filepath.Join(r.dir, name)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(path), 0o750))
	require.NoError(r.t, os.WriteFile(path, []byte(text), 0o600))
}

func (r *repo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), out)
}

func (r *repo) commit(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
}

// check runs apicheck.sh on the repository with args.
func (r *repo) check(args ...string) (string, error) {
	r.t.Helper()
	script, err := filepath.Abs("../apicheck.sh")
	require.NoError(r.t, err)
	cmd := exec.Command("bash", append([]string{script, "-C", r.dir}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// exitCode is err's exit code, 0 for nil.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	return ee.ExitCode()
}

func TestScriptRecordsPublicPackagesOnly(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	entries, err := os.ReadDir(filepath.Join(r.dir, "api"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"m.txt", "sub.txt"}, names)
	m, err := os.ReadFile(filepath.Join(r.dir, "api", "m.txt"))
	require.NoError(t, err)
	assert.Equal(t, "# The exported API of example.com/m, written by scripts/apicheck.sh -w.\nfunc F(int)\n", string(m))

	out, err := r.check()
	assert.Equal(t, 0, exitCode(t, err), out)
	assert.Contains(t, out, "apicheck: ok")
}

func TestScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(r *repo)
		code   int
		says   []string
	}{
		{
			name: "an addition passes, listed",
			change: func(r *repo) {
				r.write("g.go", "package m\n\n// G is new.\nfunc G() {}\n")
			},
			says: []string{"compatible additions", "m: + func G()", "apicheck: ok"},
		},
		{
			name: "a new package passes, listed",
			change: func(r *repo) {
				r.write("extra/extra.go", "// Package extra is new.\npackage extra\n\n// V is new.\nvar V int\n")
			},
			says: []string{"extra: + var V int"},
		},
		{
			name: "an incompatible change is refused",
			change: func(r *repo) {
				r.write("m.go", "// Package m is a test.\npackage m\n\n// F is a function.\nfunc F(n int, s string) {}\n")
			},
			code: 1,
			says: []string{"m: - func F(int)", "m: + func F(int, string)", "scripts/apicheck.sh -w"},
		},
		{
			name: "a removed package is refused",
			change: func(r *repo) {
				r.git("rm", "-q", "-r", "sub")
			},
			code: 1,
			says: []string{"sub: - type T struct, A int"},
		},
		{
			name: "a field made another type is refused",
			change: func(r *repo) {
				r.write("sub/sub.go", "// Package sub is a test.\npackage sub\n\n// T is a type.\ntype T struct{ A int64 }\n")
			},
			code: 1,
			says: []string{"sub: - type T struct, A int"},
		},
		{
			name: "an incompatible change recorded without a changelog line is refused",
			change: func(r *repo) {
				r.write("m.go", "// Package m is a test.\npackage m\n")
				r.mustCheck("-w")
			},
			code: 1,
			says: []string{"the record changes incompatibly", "m: - func F(int)", "Unreleased section did not change"},
		},
		{
			name: "a changelog line outside Unreleased does not count",
			change: func(r *repo) {
				r.write("m.go", "// Package m is a test.\npackage m\n")
				r.mustCheck("-w")
				r.write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Changed\n\n## [0.1.0] - 2026-12-01\n\n- First.\n- F.\n")
			},
			code: 1,
			says: []string{"Unreleased section did not change"},
		},
		{
			name: "an incompatible change recorded with a changelog line passes",
			change: func(r *repo) {
				r.write("m.go", "// Package m is a test.\npackage m\n")
				r.mustCheck("-w")
				r.write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Changed\n\n- F is gone.\n\n## [0.1.0] - 2026-12-01\n\n- First.\n")
			},
			says: []string{"m: - func F(int)", "ok: recorded, and CHANGELOG.md's Unreleased section says so"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			tt.change(r)
			r.commit("Change")
			out, err := r.check()
			assert.Equal(t, tt.code, exitCode(t, err), out)
			for _, s := range tt.says {
				assert.Contains(t, out, s)
			}
		})
	}
}

// TestScriptChecksTheWholeChange checks that the base is HEAD's first
// parent: the record and the changelog may change in the commit that
// changes the code or, on a merge, anywhere on the branch merged.
func TestScriptChecksTheWholeChange(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.git("checkout", "-q", "-b", "topic")
	r.write("m.go", "// Package m is a test.\npackage m\n")
	r.mustCheck("-w")
	r.commit("Remove F")
	r.write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Changed\n\n- F is gone.\n\n## [0.1.0] - 2026-12-01\n\n- First.\n")
	r.commit("Say so")

	// On the branch, the last commit alone does not change the record.
	out, err := r.check()
	assert.Equal(t, 0, exitCode(t, err), out)
	// Against main, the branch changes both.
	out, err = r.check("-base", "main")
	assert.Equal(t, 0, exitCode(t, err), out)
	assert.Contains(t, out, "ok: recorded")

	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--no-ff", "-m", "Merge topic", "topic")
	out, err = r.check()
	assert.Equal(t, 0, exitCode(t, err), out)
	assert.Contains(t, out, "ok: recorded")

	// The branch's first commit, checked on its own, lacks the changelog.
	out, err = r.check("-base", "topic~2")
	assert.Equal(t, 0, exitCode(t, err), out) // main..merge changes both
	r.git("checkout", "-q", "topic~1")
	out, err = r.check()
	assert.Equal(t, 1, exitCode(t, err), out)
}

// TestScriptWithoutParent checks a repository whose HEAD has no parent:
// the code is checked against the record alone.
func TestScriptWithoutParent(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.git("checkout", "-q", "--orphan", "fresh")
	r.commit("One commit")
	out, err := r.check()
	assert.Equal(t, 0, exitCode(t, err), out)
	assert.Contains(t, out, "HEAD has no parent")

	r.write("m.go", "// Package m is a test.\npackage m\n")
	out, err = r.check()
	assert.Equal(t, 1, exitCode(t, err), out)
}

func (r *repo) mustCheck(args ...string) {
	r.t.Helper()
	out, err := r.check(args...)
	require.NoError(r.t, err, out)
}
