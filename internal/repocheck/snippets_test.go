package repocheck_test

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// knownImports gives the import path of each package name a Go block of the
// docs may use without importing it (see the package comment).
var knownImports = map[string]string{
	"bytes":         "bytes",
	"context":       "context",
	"errors":        "errors",
	"filepath":      "path/filepath",
	"fmt":           "fmt",
	"http":          "net/http",
	"io":            "io",
	"json":          "encoding/json",
	"log":           "log",
	"netip":         "net/netip",
	"os":            "os",
	"slices":        "slices",
	"slog":          "log/slog",
	"strings":       "strings",
	"testing":       "testing",
	"time":          "time",
	"retryablehttp": "github.com/hashicorp/go-retryablehttp",
	"synthient":     "github.com/synthient-go/synthient",
	"synthienttest": "github.com/synthient-go/synthient/synthienttest",
	"retry":         "github.com/synthient-go/synthient/retry",
	"retryhttp":     "github.com/synthient-go/synthient/retry/retryhttp",
	// The otel module's, and the OpenTelemetry packages it takes: a block
	// that uses one compiles in that module (see moduleOf).
	"synthotel":   "github.com/synthient-go/synthient/otel",
	"trace":       "go.opentelemetry.io/otel/trace",
	"metric":      "go.opentelemetry.io/otel/metric",
	"propagation": "go.opentelemetry.io/otel/propagation",
	"exports":     "github.com/synthient-go/synthient/exports",
	"feedindex":   "github.com/synthient-go/synthient/feedindex",
	// The redis module's, and the Redis client it takes: a block that uses
	// one compiles in that module.
	"synthredis": "github.com/synthient-go/synthient/redis",
	"goredis":    "github.com/redis/go-redis/v9",
}

// module is a module of the repository that Go blocks compile in: its
// directory and its module path.
type module struct{ dir, path string }

// otelPackages are the import paths that only the otel module (otel/, a
// module of its own) can build: the root module has no OpenTelemetry.
var otelPackages = []string{"github.com/synthient-go/synthient/otel", "go.opentelemetry.io/"}

// redisPackages are the import paths that only the redis module (redis/)
// can build.
var redisPackages = []string{"github.com/synthient-go/synthient/redis", "github.com/redis/go-redis/"}

// moduleOf returns the module block b compiles in: the otel module when it
// imports (a whole file) or uses (any other block) one of otelPackages,
// the redis module for one of redisPackages, else the root module. root
// is the root module's directory.
func moduleOf(root string, b block) module {
	var paths []string
	if startsWithPackage(b.code) {
		f, err := parser.ParseFile(token.NewFileSet(), "", b.code, parser.ImportsOnly)
		if err == nil {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				paths = append(paths, path)
			}
		}
	} else {
		src := "package snippet\n" + b.code
		if !isDeclarations(b.code) {
			src = "package snippet\nfunc _" + strings.TrimPrefix(cmp.Or(b.signature, "func()"), "func") + " {\n" + b.code + "}\n"
		}
		for _, name := range packagesUsed(src) {
			paths = append(paths, knownImports[name])
		}
	}
	for _, path := range paths {
		for _, otel := range otelPackages {
			if strings.HasPrefix(path, otel) {
				return module{dir: filepath.Join(root, "otel"), path: "github.com/synthient-go/synthient/otel"}
			}
		}
		for _, redis := range redisPackages {
			if strings.HasPrefix(path, redis) {
				return module{dir: filepath.Join(root, "redis"), path: "github.com/synthient-go/synthient/redis"}
			}
		}
	}
	return module{dir: root, path: "github.com/synthient-go/synthient"}
}

// snippetComment is the HTML comment that gives the signature a block of
// statements is compiled in.
var snippetComment = regexp.MustCompile(`^<!--\s*snippet:\s*(.*?)\s*-->$`)

// openingFence matches the first line of a fenced code block; its second
// group is the info string.
var openingFence = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})\\s*([^`]*)$")

// block is one Go block of a Markdown file.
type block struct {
	file      string // the Markdown file, as given to goBlocks
	fence     int    // line of the opening fence; the code starts on the next
	comment   int    // line of the snippet comment, 0 without one
	signature string // the snippet comment's signature, "" without one
	code      string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.fence) }

// goBlocks returns the Go blocks of the Markdown file. A snippet comment
// that is not right before a Go block (blank lines aside) is an error.
func goBlocks(file string) ([]block, error) {
	data, err := os.ReadFile(file) //nolint:gosec // a file of this repository
	if err != nil {
		return nil, err
	}
	var (
		blocks     []block
		cur        *block // the Go block being read
		closing    string // the fence that closes the current block, "" outside one
		indent     int    // the opening fence's indentation
		code       []string
		pending    int // line of a snippet comment waiting for its block
		pendingSig string
	)
	misplaced := func() error {
		return fmt.Errorf("%s:%d: a snippet comment must come right before a ```go block", file, pending)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if closing != "" {
			if strings.HasPrefix(trimmed, closing) && strings.Trim(trimmed, closing[:1]) == "" {
				if cur != nil {
					cur.code = strings.Join(code, "\n") + "\n"
					blocks = append(blocks, *cur)
				}
				closing, cur, code = "", nil, nil
				continue
			}
			// Drop up to the fence's indentation, as Markdown does.
			for i := 0; i < indent && strings.HasPrefix(line, " "); i++ {
				line = line[1:]
			}
			code = append(code, line)
			continue
		}
		if m := openingFence.FindStringSubmatch(line); m != nil {
			closing = m[1]
			indent = len(line) - len(strings.TrimLeft(line, " "))
			info := strings.Fields(m[2])
			if len(info) > 0 && (info[0] == "go" || info[0] == "golang") {
				cur = &block{file: file, fence: n, comment: pending, signature: pendingSig}
			} else if pending != 0 {
				return nil, misplaced()
			}
			pending, pendingSig = 0, ""
			continue
		}
		if trimmed == "" {
			continue
		}
		if pending != 0 {
			return nil, misplaced()
		}
		if m := snippetComment.FindStringSubmatch(trimmed); m != nil {
			pending, pendingSig = n, m[1]
		} else if strings.HasPrefix(trimmed, "<!--") && strings.Contains(trimmed, "snippet:") {
			return nil, fmt.Errorf("%s:%d: a snippet comment must be one line, <!-- snippet: func(...) -->", file, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if closing != "" {
		return nil, fmt.Errorf("%s: a code block is not closed", file)
	}
	if pending != 0 {
		return nil, misplaced()
	}
	return blocks, nil
}

// source returns the Go file that compiles block b, with //line directives
// that place its code in the Markdown file at the absolute path md.
func source(md string, b block) (string, error) {
	at := func(line int) string { return fmt.Sprintf("//line %s:%d:1\n", md, line) }

	if startsWithPackage(b.code) {
		if b.signature != "" {
			return "", fmt.Errorf("%s: a whole file takes no snippet comment", b)
		}
		return at(b.fence+1) + b.code, nil
	}

	var body string
	switch {
	case b.signature != "":
		fset := token.NewFileSet()
		e, err := parser.ParseExprFrom(fset, "", b.signature, 0)
		ft, ok := e.(*ast.FuncType)
		if err != nil || !ok {
			return "", fmt.Errorf("%s:%d: a snippet comment gives a function signature, such as func(ctx context.Context) error", b.file, b.comment)
		}
		body = at(b.comment) + "func _" + strings.TrimPrefix(b.signature, "func") + " {\n" +
			at(b.fence+1) + b.code + zeroReturn(fset, ft) + "}\n"
	case isDeclarations(b.code):
		body = at(b.fence+1) + b.code
	default:
		body = "func _() {\n" + at(b.fence+1) + b.code + "}\n"
	}

	var imports []string
	for _, name := range packagesUsed("package snippet\n" + body) {
		imports = append(imports, fmt.Sprintf("\t%s %q\n", name, knownImports[name])) // by name: synthotel is package otel
	}
	slices.Sort(imports)
	src := "package snippet\n\n"
	if len(imports) > 0 {
		src += "import (\n" + strings.Join(imports, "") + ")\n\n"
	}
	return src + body, nil
}

// startsWithPackage reports whether code begins with a package clause,
// comments aside.
func startsWithPackage(code string) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "", code, parser.PackageClauseOnly)
	return err == nil
}

// isDeclarations reports whether code parses as the declarations of a file.
func isDeclarations(code string) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, parser.SkipObjectResolution)
	return err == nil
}

// zeroReturn returns what ends a function of type ft after its block:
// nothing without results, else a return of zero values.
func zeroReturn(fset *token.FileSet, ft *ast.FuncType) string {
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return ""
	}
	if ft.Results.List[0].Names != nil {
		return "\treturn\n"
	}
	var zeros []string
	for _, r := range ft.Results.List {
		var typ strings.Builder
		if err := printer.Fprint(&typ, fset, r.Type); err != nil {
			panic(err) // a parsed expression always prints
		}
		zeros = append(zeros, "*new("+typ.String()+")")
	}
	return "\treturn " + strings.Join(zeros, ", ") + "\n"
}

// packagesUsed returns the names of knownImports that src uses as the
// package of a selector, sorted. src that does not parse uses none: the
// build then reports its syntax error.
func packagesUsed(src string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && knownImports[id.Name] != "" && !slices.Contains(names, id.Name) {
				names = append(names, id.Name)
			}
		}
		return true
	})
	slices.Sort(names)
	return names
}

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// compile builds blocks, each as a package of its own, in the module mod.
// It returns "" when they all compile, else a report that gives each
// failing block (its file and fence line) and its errors (file:line:column
// in the Markdown, through //line directives).
func compile(t *testing.T, mod module, blocks []block) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command compiles the docs' Go blocks: %v", err)
	}

	// Each block's package lives in a directory that exists only in the
	// build's overlay, inside the module: it imports the module's packages
	// and dependencies as the module's own code does.
	pkgBase := mod.path + "/internal/snippet"
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	byPkg := map[string]block{}
	for i, b := range blocks {
		md, err := filepath.Abs(b.file)
		if err != nil {
			t.Fatal(err)
		}
		src, err := source(md, b)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("b%02d", i)
		file := filepath.Join(tmp, name+".go")
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(mod.dir, "internal", "snippet", name, "snippet.go")] = file
		pkgs = append(pkgs, pkgBase+"/"+name)
		byPkg[pkgBase+"/"+name] = b
	}
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o600); err != nil {
		t.Fatal(err)
	}

	// Several packages and no -o: the results are discarded. -gcflags=-e
	// reports every error of a package, not the first ten.
	cmd := exec.CommandContext(t.Context(), goTool, append([]string{"build", "-overlay", ovFile, "-gcflags=-e"}, pkgs...)...) //nolint:gosec // the go tool that runs this test, on this module
	cmd.Dir = mod.dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}

	// The output has a section per failing package: "# <import path>", then
	// its errors. Report the sections in the order of the blocks.
	sections := map[string][]string{}
	var other []string
	pkg := ""
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if p, ok := strings.CutPrefix(line, "# "); ok {
			if _, ok := byPkg[p]; ok {
				pkg = p
				continue
			}
		}
		if pkg == "" {
			other = append(other, line)
			continue
		}
		sections[pkg] = append(sections[pkg], "\t"+strings.TrimPrefix(line, "./"))
	}
	report := append([]string{"go build: " + err.Error()}, other...)
	for _, p := range pkgs {
		if lines, ok := sections[p]; ok {
			report = append(report, fmt.Sprintf("%s: this ```go block does not compile:", byPkg[p]))
			report = append(report, lines...)
		}
	}
	return strings.Join(report, "\n")
}

// TestDocSnippets compiles every Go block of README.md and docs/*.md.
func TestDocSnippets(t *testing.T) {
	root := moduleRoot(t)
	t.Chdir(root) // the blocks' file names are relative to it
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	for _, file := range append([]string{"README.md"}, docs...) {
		bs, err := goBlocks(file)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) == 0 {
		t.Fatal("no Go block in README.md or docs/*.md")
	}
	byModule := map[module][]block{}
	for _, b := range blocks {
		mod := moduleOf(root, b)
		byModule[mod] = append(byModule[mod], b)
	}
	for mod, bs := range byModule {
		if report := compile(t, mod, bs); report != "" {
			t.Error(report)
		}
		t.Logf("%d Go blocks compile in %s", len(bs), mod.path)
	}
}

// TestDocSnippetsReportsErrors checks that a block that does not compile
// fails with its file and line, and that each kind of block is wrapped as
// the package comment says.
func TestDocSnippetsReportsErrors(t *testing.T) {
	root := moduleRoot(t)
	t.Chdir(t.TempDir())
	const doc = "# Doc\n" + // 1
		"\n" + // 2
		"<!-- snippet: func(ctx context.Context, c *synthient.Client) error -->\n" + // 3
		"```go\n" + // 4
		"meta, err := c.ExportMeta(ctx, synthient.FeedProxies, \"latest\")\n" + // 5
		"```\n" + // 6
		"\n" + // 7
		"```go\n" + // 8
		"func Check(t *testing.T) { t.Log(time.Second) }\n" + // 9
		"```\n" + // 10
		"\n" + // 11
		"```go\n" + // 12
		"package main\n" + // 13
		"\n" + // 14
		"func main() { undefinedName() }\n" + // 15
		"```\n" + // 16
		"\n" + // 17
		"<!-- snippet: func(err error) (int, error) -->\n" + // 18
		"```go\n" + // 19
		"if err != nil {\n" + // 20
		"\treturn 0, fmt.Errorf(\"wrapped: %w\", err)\n" + // 21
		"}\n" + // 22
		"```\n" // 23
	if err := os.WriteFile("doc.md", []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	blocks, err := goBlocks("doc.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 {
		t.Fatalf("%d blocks, want 4", len(blocks))
	}
	report := compile(t, moduleOf(root, blocks[0]), blocks)
	for _, want := range []string{
		"doc.md:4: this ```go block does not compile:",
		"doc.md:5:1: declared and not used: meta",
		"doc.md:5:7: declared and not used: err",
		"doc.md:12: this ```go block does not compile:",
		"doc.md:15:15: undefined: undefinedName",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	for _, notWant := range []string{"doc.md:8:", "doc.md:9:", "doc.md:19:", "doc.md:2"} {
		if strings.Contains(report, notWant) {
			t.Errorf("the report names a block that compiles (%q):\n%s", notWant, report)
		}
	}
}

// TestGoBlocks checks how Go blocks and snippet comments are read.
func TestGoBlocks(t *testing.T) {
	t.Chdir(t.TempDir())
	read := func(doc string) ([]block, error) {
		if err := os.WriteFile("doc.md", []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return goBlocks("doc.md")
	}

	blocks, err := read("text\n" +
		"<!-- snippet: func(err error) -->\n" +
		"\n" +
		"```go\n" +
		"a()\n" +
		"```\n" +
		"~~~\n" +
		"```go\n" +
		"inside another block\n" +
		"~~~\n" +
		"```sh\n" +
		"go test ./...\n" +
		"```\n" +
		"  ````golang\n" +
		"  b()\n" +
		"     c()\n" +
		"  ````\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []block{
		{file: "doc.md", fence: 4, comment: 2, signature: "func(err error)", code: "a()\n"},
		{file: "doc.md", fence: 14, code: "b()\n   c()\n"},
	}
	if !slices.Equal(blocks, want) {
		t.Errorf("blocks\n%+v\nwant\n%+v", blocks, want)
	}

	for _, doc := range []string{
		"<!-- snippet: func() -->\n```sh\nls\n```\n",        // before another kind of block
		"<!-- snippet: func() -->\ntext\n```go\nx()\n```\n", // text between
		"<!-- snippet: func() -->\n",                        // before nothing
		"<!-- snippet: func()\n-->\n```go\nx()\n```\n",      // on two lines
		"```go\nx()\n", // not closed
	} {
		if _, err := read(doc); err == nil {
			t.Errorf("%q: no error", doc)
		}
	}
}

// TestModuleOf checks which module each kind of block compiles in.
func TestModuleOf(t *testing.T) {
	t.Parallel()
	root := "/repo"
	otel := module{dir: filepath.Join(root, "otel"), path: "github.com/synthient-go/synthient/otel"}
	core := module{dir: root, path: "github.com/synthient-go/synthient"}
	redis := module{dir: filepath.Join(root, "redis"), path: "github.com/synthient-go/synthient/redis"}
	for _, tc := range []struct {
		name string
		b    block
		want module
	}{
		{"statements", block{code: "c, _ := synthient.NewClient(\"k\")\n_ = c\n"}, core},
		{"statements using the otel module", block{code: "obs, _ := synthotel.NewObserver()\n_ = obs\n"}, otel},
		{"a signature using OpenTelemetry", block{signature: "func(tp trace.TracerProvider)", code: "_ = tp\n"}, otel},
		{"declarations", block{code: "func F() { _ = propagation.TraceContext{} }\n"}, otel},
		{"a whole file", block{code: "package main\n\nimport _ \"go.opentelemetry.io/otel\"\n\nfunc main() {}\n"}, otel},
		{"statements using the redis module", block{code: "c, _ := synthredis.New(goredis.NewClient(nil))\n_ = c\n"}, redis},
		{"a whole file of the root module", block{code: "package main\n\nimport _ \"github.com/synthient-go/synthient\"\n\nfunc main() {}\n"}, core},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := moduleOf(root, tc.b); got != tc.want {
				t.Errorf("moduleOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}
