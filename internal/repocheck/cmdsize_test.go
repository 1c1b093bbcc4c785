package repocheck_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The limits of cmd/synthient's files and types (issue 25): a file a
// reader can hold, and no type that everything hangs off.
const (
	maxFileLines   = 400
	maxTypeMethods = 15
)

// TestCommandSizeLimits checks that no Go file of cmd/synthient, tests
// included, is longer than 400 lines, and that no type there has more
// than 15 methods.
func TestCommandSizeLimits(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(moduleRoot(t), "cmd", "synthient")
	files, problems := sizeProblems(t, dir)
	require.Greater(t, files, 30, "found %d Go files under cmd/synthient: the walk is broken", files)
	for _, p := range problems {
		t.Error(p)
	}
}

// The check finds a file over the limit and a type with too many
// methods, which it counts across the files of a package.
func TestCommandSizeLimitsFindOversizes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := "package p\n" + strings.Repeat("// a line\n", maxFileLines)
	var methods strings.Builder
	methods.WriteString("package p\n\ntype big struct{}\n")
	for i := range maxTypeMethods {
		fmt.Fprintf(&methods, "func (big) m%d() {}\n", i)
	}
	more := "package p\n\nfunc (*big) extra() {}\n\ntype small struct{}\n\nfunc (small) m() {}\n"
	for name, src := range map[string]string{"long.go": long, "methods.go": methods.String(), "more.go": more} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600))
	}
	files, problems := sizeProblems(t, dir)
	assert.Equal(t, 3, files)
	require.Len(t, problems, 2, "%q", problems)
	assert.Contains(t, problems[0], "long.go: 401 lines")
	assert.Contains(t, problems[1], "type big has 16 methods")
}

// sizeProblems returns how many Go files the tree under root holds, and
// a line for each file over maxFileLines and each type (of one package
// directory) with more than maxTypeMethods methods.
func sizeProblems(t *testing.T, root string) (files int, problems []string) {
	t.Helper()
	methods := map[string]int{} // "dir type" -> methods
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		files++
		src, err := os.ReadFile(path) //nolint:gosec // a file of the tree the test walks
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if n := strings.Count(string(src), "\n"); n > maxFileLines {
			problems = append(problems, fmt.Sprintf("%s: %d lines, more than %d: split it", rel, n, maxFileLines))
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
				methods[filepath.Dir(rel)+" "+receiverType(fn.Recv.List[0].Type)]++
			}
		}
		return nil
	})
	require.NoError(t, err)
	var types []string
	for k, n := range methods {
		if n > maxTypeMethods {
			dir, typ, _ := strings.Cut(k, " ")
			types = append(types, fmt.Sprintf("%s: type %s has %d methods, more than %d: split it", dir, typ, n, maxTypeMethods))
		}
	}
	slices.Sort(problems)
	slices.Sort(types)
	return files, append(problems, types...)
}

// receiverType is the name of a method's receiver type, without its
// pointer and type parameters.
func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverType(x.X)
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", e)
}
