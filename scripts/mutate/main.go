// Command mutate runs a mutation pass: it changes one operator at a time in
// the named Go files (== and !=, < and <=, > and >=, && and ||, true and
// false, a dropped !), runs the tests of the file's package after each
// change, and reports how many mutants the tests killed. A mutant that does
// not compile is not counted. The files are restored after each mutant, also
// when the command is interrupted.
//
//	go run ./scripts/mutate [-list] [-sample N] [-seed S] [-timeout D] file.go...
//
// With -sample N it runs N mutants drawn with the seed from all the sites
// (the same files and seed draw the same sites while the code is the same).
// Every survivor is listed with its position, so that a test can be written
// for it or the mutant shown to change nothing.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// mutant is one change: the bytes at [off, off+len(from)) of file become to.
type mutant struct {
	file     string
	off      int
	from, to string
	line     int
}

func (m mutant) String() string {
	return fmt.Sprintf("%s:%d: %s -> %s", m.file, m.line, m.from, m.to)
}

// swaps are the operator mutations.
var swaps = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.LAND: token.LOR, token.LOR: token.LAND,
}

// sites returns every mutant of file.
func sites(file string) ([]mutant, error) {
	src, err := os.ReadFile(file) //nolint:gosec // a file named on the command line: mutating it is the point
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		return nil, err
	}
	var out []mutant
	add := func(pos token.Pos, from, to string) {
		p := fset.Position(pos)
		out = append(out, mutant{file: file, off: p.Offset, from: from, to: to, line: p.Line})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if to, ok := swaps[n.Op]; ok {
				add(n.OpPos, n.Op.String(), to.String())
			}
		case *ast.Ident:
			switch n.Name {
			case "true":
				add(n.Pos(), "true", "false")
			case "false":
				add(n.Pos(), "false", "true")
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				add(n.OpPos, "!", "")
			}
		}
		return true
	})
	return out, nil
}

// outcome of one mutant.
type outcome int

const (
	killed outcome = iota
	survived
	invalid // does not compile
)

// run applies m, tests its package and restores the file.
func run(ctx context.Context, m mutant, timeout time.Duration) (outcome, error) {
	return apply(m, func() (outcome, error) {
		pkg := "./" + filepath.Dir(m.file)
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// pkg is the directory of a file named on the command line.
		out, err := exec.CommandContext(tctx, "go", "test", "-count=1", "-failfast", pkg).CombinedOutput() //nolint:gosec // see above
		switch {
		case err == nil:
			return survived, nil
		case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
			return invalid, ctx.Err()
		}
		return killed, ctx.Err() // a failing test or a timeout kills it
	})
}

// apply writes m into its file, runs test, and writes the file back as it
// was, with its mode. A file that cannot be written back ends the pass:
// its error says so, and which mutant the file may still hold.
func apply(m mutant, test func() (outcome, error)) (o outcome, err error) {
	fi, err := os.Stat(m.file)
	if err != nil {
		return invalid, err
	}
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return invalid, err
	}
	if !bytes.Equal(orig[m.off:m.off+len(m.from)], []byte(m.from)) {
		return invalid, fmt.Errorf("%v: source changed under the run", m)
	}
	mutated := slices.Concat(orig[:m.off], []byte(m.to), orig[m.off+len(m.from):])
	// Restored also when the mutant's write fails: it may have
	// truncated the file.
	defer func() {
		if rerr := os.WriteFile(m.file, orig, fi.Mode().Perm()); rerr != nil { //nolint:gosec // a file named on the command line: mutating it is the point
			o, err = invalid, fmt.Errorf("restoring %s, which may hold the mutant %v: %w", m.file, m, rerr)
		}
	}()
	if err := os.WriteFile(m.file, mutated, fi.Mode().Perm()); err != nil { //nolint:gosec // as above
		return invalid, err
	}
	return test()
}

func main() {
	sample := flag.Int("sample", 0, "run this many mutants drawn at random (0: all)")
	seed := flag.Uint64("seed", 1, "seed of the draw")
	timeout := flag.Duration("timeout", 3*time.Minute, "longest test run of one mutant (longer: killed)")
	list := flag.Bool("list", false, "list the mutants and run none")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var all []mutant
	for _, file := range flag.Args() {
		m, err := sites(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(2)
		}
		all = append(all, m...)
	}
	if *sample > 0 && *sample < len(all) {
		r := rand.New(rand.NewPCG(*seed, *seed)) //nolint:gosec // a draw the seed repeats, not a secret
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		all = all[:*sample]
		slices.SortFunc(all, func(a, b mutant) int {
			if c := strings.Compare(a.file, b.file); c != 0 {
				return c
			}
			return a.off - b.off
		})
	}
	if *list {
		for _, m := range all {
			fmt.Println(m)
		}
		fmt.Printf("%d mutants\n", len(all))
		return
	}
	counts := map[outcome]int{}
	var survivors []mutant
	for i, m := range all {
		o, err := run(ctx, m, *timeout)
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "mutate: interrupted")
			os.Exit(130)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(1)
		}
		counts[o]++
		if o == survived {
			survivors = append(survivors, m)
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %v: %s\n", i+1, len(all), m, [...]string{"killed", "SURVIVED", "does not compile"}[o])
	}
	fmt.Printf("mutants: %d run, %d killed, %d survived, %d did not compile\n",
		len(all), counts[killed], counts[survived], counts[invalid])
	for _, m := range survivors {
		fmt.Println("survived:", m)
	}
}
