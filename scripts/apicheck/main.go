// Command apicheck records the exported API of a repository's public
// packages as text, one line per feature, and compares two records.
// scripts/apicheck.sh runs it; see that script for the gate CI runs.
//
//	apicheck list DIR            # the public packages of the repository at DIR
//	apicheck write DIR OUT       # OUT/NAME.txt for each of them
//	apicheck compare OLD NEW     # two record folders: exit 1 on a removed line
//
// # Public packages
//
// The public packages are found, not listed: every package of every module
// in DIR (the go.mod files under it, except those under scripts/, testdata/,
// vendor/, node_modules/ and hidden folders) that is not a command (package
// main) and has no "internal" element in its import path. A package's
// record is OUT/NAME.txt, where NAME is its folder relative to DIR with
// "/" written as "-", and the root module's root package is named after the
// last element of its module path (api/synthient.txt).
//
// # The record
//
// The format is that of Go's own api/go1.*.txt, which guards the standard
// library's compatibility promise: a sorted line per exported feature, with
// types written without parameter names, and packages other than the
// package's own by import path:
//
//	pkg synthient, func NewClient(string, ...Option) (*Client, error)
//	pkg synthient, method (*Client) LookupIP(context.Context, net/netip.Addr) (*IPResult, error)
//	pkg synthient, type RequestEnd struct, Status int
//	pkg synthient, type Observer interface { RequestEnd, RequestStart }
//	pkg synthient, const Version = "0.1.0"
//
// A change that keeps every line of the old record is compatible: it only
// adds features. A line that is gone, or changed, is an incompatible change
// to that feature: a removed name, a changed signature, field type or
// constant value, a method added to an interface (its first line lists the
// method set), a struct that is no longer comparable (the "comparable"
// line), a method gone from a type's method set (promoted ones included).
// What it reports in excess, and says so, is a method added to an interface
// that has unexported methods (nobody outside could implement it) and a
// change to the name of an unexported type that an exported one is
// defined as: both fail safe.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: apicheck list DIR | write DIR OUT | compare OLD NEW")
	}
	switch cmd, args := args[0], args[1:]; {
	case cmd == "list" && len(args) == 1:
		pkgs, err := publicPackages(args[0])
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			if _, err := fmt.Fprintf(stdout, "%s\t%s\n", p.name, p.path); err != nil {
				return err
			}
		}
		return nil
	case cmd == "write" && len(args) == 2:
		return write(args[0], args[1])
	case cmd == "compare" && len(args) == 2:
		incompatible, err := compareDirs(args[0], args[1], stdout)
		if err != nil {
			return err
		}
		if incompatible {
			os.Exit(1)
		}
		return nil
	default:
		return fmt.Errorf("usage: apicheck list DIR | write DIR OUT | compare OLD NEW")
	}
}
