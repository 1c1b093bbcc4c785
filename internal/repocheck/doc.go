// Package repocheck holds tests of the repository rather than of its code;
// it has no code of its own. `go test ./...`, and so .ci/run, runs them:
//
//   - TestDocSnippets compiles every Go block of README.md and docs/*.md;
//     TestQuickStartRunsOnTheFake builds the README's Quick start and runs
//     it against the fake API (SYNTHIENT_BASE_URL and SYNTHIENT_API_KEY set
//     as synthient fake-server prints them), checking what it prints.
//   - TestEveryTestPackageChecksLeaks checks that every directory with tests,
//     the otel module's included, has a TestMain that calls
//     goleak.VerifyTestMain.
//   - TestDocLinks checks the relative links of README.md and docs/*.md, and
//     that nothing points at the project's steering folder beside the
//     repository, which a clone does not have.
//   - TestCIRunsTheReadmeTests checks that .ci/run runs the README's test
//     command (with more flags if it likes).
//   - TestRootLeavesOutParquet checks, with go list, that package synthient
//     builds in no Parquet library: reading exports is package exports'
//     (and the fake's) alone.
//   - TestInternalLeavesOutTheRoot checks, with go list, that no package
//     under internal/ builds in package synthient: the engines there are
//     the root's.
//   - TestChangelogNamesTheVersion checks that the newest release in
//     CHANGELOG.md is synthient.Version (and the otel module's Version),
//     that releases are newest first, each with its link;
//     TestChangelogHasUnreleased that the changelog starts with an
//     Unreleased section with the headings Added, Changed, Fixed and
//     Security.
//
// # Go blocks in the docs
//
// Every fenced block whose info string is "go" is compiled against the
// module as it is, by `go build` with an overlay: nothing is written into the
// tree and no module is added. A block is one of:
//
//   - a whole file, which starts with a package clause: compiled as it is;
//   - declarations (functions, types, variables): compiled as a file of
//     package snippet;
//   - statements: compiled as the body of a function.
//
// That function is func() by default. A block of statements that uses names
// it does not declare (ctx, c, err, ...), or that returns something, gives the
// function's signature in an HTML comment on the line before its fence (no
// renderer shows it; blank lines between them are allowed):
//
//	<!-- snippet: func(ctx context.Context, c *synthient.Client) error -->
//	```go
//	for e, err := range c.AllExports(ctx, synthient.FeedProxies, nil) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(e.ID)
//	}
//	```
//
// The parameters are the names the block assumes, with their types; the
// result is what its return statements return. A function with a result
// gets a final return of zero values after the block, so a block that ends
// without returning compiles too. A snippet comment anywhere else (before
// another kind of block, or before a whole file) fails the test.
//
// Imports are added for the packages a block or its signature uses, by
// name, from the table knownImports in snippets_test.go: the standard
// packages the docs use, this module's (synthient, synthienttest, retry),
// and the otel module's (synthotel) with the OpenTelemetry packages it
// takes (trace, metric, propagation). A block that uses one of the latter
// is compiled in the otel module (otel/, a module of its own, which
// builds against this tree through its replace directive): the root module
// has no OpenTelemetry. Likewise a block that uses the redis module's
// package (synthredis) or go-redis (goredis) compiles in the redis module.
// A block that uses a package missing from the table fails with
// "undefined"; add the package there. A whole file keeps its own imports.
//
// A failure names the block and, through //line directives, the Markdown
// file and line of each error, such as "README.md:164:2: declared and not
// used: meta". Everything a block declares must be used, as in any Go code:
// a copied snippet that drops an error does not compile.
package repocheck
