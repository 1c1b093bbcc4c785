package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// compareDirs compares the records in folders old and new, package by
// package, and writes every removed line ("-") and added line ("+") to out.
// It reports whether a line was removed: an incompatible change. A package
// whose record is gone has lost every line; a new one adds every line. A
// missing folder holds no record.
func compareDirs(oldDir, newDir string, out io.Writer) (incompatible bool, err error) {
	oldRecs, err := readRecords(oldDir)
	if err != nil {
		return false, err
	}
	newRecs, err := readRecords(newDir)
	if err != nil {
		return false, err
	}
	var names []string
	for name := range oldRecs {
		names = append(names, name)
	}
	for name := range newRecs {
		if _, ok := oldRecs[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		removed, added := diff(oldRecs[name], newRecs[name])
		for _, l := range removed {
			if _, err := fmt.Fprintf(out, "%s: - %s\n", name, l); err != nil {
				return false, err
			}
		}
		for _, l := range added {
			if _, err := fmt.Fprintf(out, "%s: + %s\n", name, l); err != nil {
				return false, err
			}
		}
		incompatible = incompatible || len(removed) > 0
	}
	return incompatible, nil
}

// readRecords reads every NAME.txt of dir: NAME -> its features.
func readRecords(dir string) (map[string][]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	recs := map[string][]string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".txt")
		if !ok || e.IsDir() {
			continue
		}
		lines, err := readRecord(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		recs[name] = lines
	}
	return recs, nil
}

// readRecord reads the features of one record: its lines, less blank
// lines and comments (#).
func readRecord(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, s.Err()
}

// diff returns the lines of old missing from new, and those of new missing
// from old, each in order.
func diff(old, new []string) (removed, added []string) {
	inOld := map[string]bool{}
	for _, l := range old {
		inOld[l] = true
	}
	inNew := map[string]bool{}
	for _, l := range new {
		inNew[l] = true
		if !inOld[l] {
			added = append(added, l)
		}
	}
	for _, l := range old {
		if !inNew[l] {
			removed = append(removed, l)
		}
	}
	return removed, added
}
