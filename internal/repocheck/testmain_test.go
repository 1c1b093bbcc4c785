package repocheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryTestPackageChecksLeaks checks that each directory of the
// repository with tests, in the root module or a module of its own (otel/),
// has a TestMain that calls goleak.VerifyTestMain, so a test that leaves a
// goroutine behind fails.
func TestEveryTestPackageChecksLeaks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	dirs := map[string]bool{} // directory -> has goleak's TestMain
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// What the go command ignores.
			if path != root && (name == "testdata" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		dir := filepath.Dir(path)
		ok, err := verifiesLeaks(path)
		if err != nil {
			return err
		}
		dirs[dir] = dirs[dir] || ok
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 2 {
		t.Fatalf("found tests in %d directories: the walk is broken", len(dirs))
	}
	var missing []string
	for dir, ok := range dirs {
		if !ok {
			rel, _ := filepath.Rel(root, dir)
			missing = append(missing, rel)
		}
	}
	slices.Sort(missing)
	for _, dir := range missing {
		t.Errorf("%s: no TestMain calls goleak.VerifyTestMain; add\n\n"+
			"func TestMain(m *testing.M) {\n\tgoleak.VerifyTestMain(m)\n}", dir)
	}
}

// verifiesLeaks reports whether the test file declares TestMain and calls
// go.uber.org/goleak's VerifyTestMain in it.
func verifiesLeaks(file string) (bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return false, err
	}
	goleak := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "go.uber.org/goleak" {
			goleak = "goleak"
			if imp.Name != nil {
				goleak = imp.Name.Name
			}
		}
	}
	if goleak == "" {
		return false, nil
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "TestMain" || fn.Body == nil {
			continue
		}
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "VerifyTestMain" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == goleak {
						found = true
					}
				}
			}
			return !found
		})
		return found, nil
	}
	return false, nil
}
