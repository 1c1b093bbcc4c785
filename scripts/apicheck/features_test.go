package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// load type-checks src as package p.
func load(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", "package p\n"+src, 0)
	require.NoError(t, err)
	conf := types.Config{Importer: importer.Default()}
	p, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	require.NoError(t, err)
	return p
}

func TestFeatures(t *testing.T) {
	t.Parallel()
	p := load(t, `
import ("context"; "io")
const C = 1
const T Kind = "k"
type Kind string
var V io.Reader
func F(ctx context.Context, names ...string) (int, error) { return 0, nil }
func G[K comparable, V any](m map[K]V, f func(k K) bool) []K { return nil }
type S struct {
	A int
	b int
	*E
	inner
}
type E struct{ X string }
type inner struct{ Y []byte }
func (S) Value() {}
func (*S) Pointer(chan<- int) <-chan error { return nil }
func (e *E) Promoted() {}
type I interface { io.Reader; M(int) }
type Num interface { ~int | ~float64 }
type A = S
type unexported int
func (unexported) Exported() {}
`)
	assert.Equal(t, []string{
		"const C = 1",
		"const C untyped-int",
		"const T = \"k\"",
		"const T Kind",
		"func F(context.Context, ...string) (int, error)",
		"func G[K comparable, V any](map[K]V, func(K) bool) []K",
		"method (*E) Promoted()",
		"method (*S) Pointer(chan<- int) <-chan error",
		"method (S) Promoted()", // through *E, in S's value method set
		"method (S) Value()",
		"type A = S",
		"type E comparable",
		"type E struct",
		"type E struct, X string",
		"type I interface { M, Read }",
		"type I interface, M(int)",
		"type I interface, Read([]byte) (int, error)",
		"type Kind string",
		"type Num interface { ~int | ~float64 }",
		"type S struct",
		"type S struct, A int",
		"type S struct, Y []byte",
		"type S struct, embedded *E",
		"var V io.Reader",
	}, features(p))
}

// TestCompatibility checks which changes the record calls incompatible:
// those that lose or change a line.
func TestCompatibility(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		old, new     string
		incompatible bool
	}{
		{"a function added", `func F() {}`, `func F() {}; func G() {}`, false},
		{"a parameter renamed", `func F(a int) {}`, `func F(b int) {}`, false},
		{"a field added", `type S struct{ A int }`, `type S struct{ A, B int }`, false},
		{"a method added to a struct", `type S struct{}`, `type S struct{}; func (S) M() {}`, false},
		{"a method added to an interface with an unexported one (in excess)", `type I interface{ m() }`, `type I interface{ m(); M() }`, true},
		{"a function removed", `func F() {}; func G() {}`, `func F() {}`, true},
		{"a parameter added", `func F(int) {}`, `func F(int, string) {}`, true},
		{"a parameter made variadic", `func F(int) {}`, `func F(...int) {}`, true},
		{"a result added", `func F() {}`, `func F() error { return nil }`, true},
		{"a field's type changed", `type S struct{ A int }`, `type S struct{ A int64 }`, true},
		{"a field removed", `type S struct{ A, B int }`, `type S struct{ A int }`, true},
		{"a method added to an interface", `type I interface{ M() }`, `type I interface{ M(); N() }`, true},
		{"a struct no longer comparable", `type S struct{ A int }`, `type S struct{ A []int }`, true},
		{"a value method made a pointer method", `type S struct{}; func (S) M() {}`, `type S struct{}; func (*S) M() {}`, true},
		{"a promoted method lost", `type E struct{}; func (E) M() {}; type S struct{ E }`, `type E struct{}; func (E) M() {}; type S struct{ e E }`, true},
		{"a constant's value changed", `const V = "0.1.0"`, `const V = "0.2.0"`, true},
		{"a typed constant made untyped", `const C int64 = 1`, `const C = 1`, true},
		{"a type made an alias of another", `type T struct{}`, `type U struct{}; type T = U`, true},
		{"a type parameter's constraint narrowed", `func F[T any](T) {}`, `func F[T comparable](T) {}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			removed, _ := diff(features(load(t, tt.old)), features(load(t, tt.new)))
			assert.Equal(t, tt.incompatible, len(removed) > 0, "removed: %q", removed)
		})
	}
}
