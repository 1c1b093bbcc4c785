package main

import (
	"fmt"
	"go/types"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// pkg is a public package: its record's name, its import path, its types.
type pkg struct {
	name  string
	path  string
	types *types.Package
}

// modules returns the folders under dir that hold a go.mod, dir first,
// leaving out those under scripts/, testdata/, vendor/, node_modules/ and
// hidden folders.
func modules(dir string) ([]string, error) {
	var mods []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(dir, p); rel == "scripts" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "go.mod" {
			mods = append(mods, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(mods, dir) {
		return nil, fmt.Errorf("%s has no go.mod", dir)
	}
	return mods, nil
}

// publicPackages loads the public packages of the repository at dir, sorted
// by name.
func publicPackages(dir string) ([]pkg, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	mods, err := modules(dir)
	if err != nil {
		return nil, err
	}
	var out []pkg
	for _, mod := range mods {
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedTypes | packages.NeedFiles | packages.NeedModule,
			Dir:  mod,
			Env:  append(os.Environ(), "GOWORK=off"),
		}
		loaded, err := packages.Load(cfg, "./...")
		if err != nil {
			return nil, fmt.Errorf("loading the packages of %s: %w", mod, err)
		}
		for _, p := range loaded {
			if len(p.Errors) > 0 {
				return nil, fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors[0])
			}
			if p.Name == "main" || isInternal(p.PkgPath) || len(p.GoFiles) == 0 {
				continue
			}
			rel, err := filepath.Rel(dir, filepath.Dir(p.GoFiles[0]))
			if err != nil {
				return nil, err
			}
			if rel == "scripts" || strings.HasPrefix(rel, "scripts"+string(filepath.Separator)) {
				continue
			}
			name := strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")
			if rel == "." {
				name = path.Base(p.Module.Path)
			}
			out = append(out, pkg{name: name, path: p.PkgPath, types: p.Types})
		}
	}
	slices.SortFunc(out, func(a, b pkg) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(out); i++ {
		if out[i].name == out[i-1].name {
			return nil, fmt.Errorf("packages %s and %s would share the record %s.txt", out[i-1].path, out[i].path, out[i].name)
		}
	}
	return out, nil
}

// isInternal reports whether importPath has an element "internal", which
// only its own module may import.
func isInternal(importPath string) bool {
	return slices.Contains(strings.Split(importPath, "/"), "internal")
}

// write writes out/NAME.txt for each public package of the repository at
// dir, creating out if needed. It writes no other file and removes none.
func write(dir, out string) error {
	pkgs, err := publicPackages(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, p := range pkgs {
		text := "# The exported API of " + p.path + ", written by scripts/apicheck.sh -w.\n" +
			strings.Join(features(p.types), "\n") + "\n"
		if err := os.WriteFile(filepath.Join(out, p.name+".txt"), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
