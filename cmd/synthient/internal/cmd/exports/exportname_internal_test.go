package exports

import (
	"strings"
	"testing"
)

// Tests of exportname.go: the export a file's name holds.

// FuzzExportOfName: whatever a file is named, exportOfName never panics;
// an export it finds is an id in its canonical form, whose year, month
// and day the name holds.
func FuzzExportOfName(f *testing.F) {
	for _, s := range []string{"proxies.parquet", "proxies-2026-12-06.parquet", "proxies-2026-12-06-04.parquet", "p_2026-12-06_4.parquet",
		"x-2026-12-06-2026-12-07.parquet", "x-2026-13-45.parquet", "dir/2026-12-06/p.parquet", "9999-99-99-99", "2026-12-06-24"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, err := exportOfName(name)
		if err != nil || id == "" {
			return
		}
		canon, ok := canonicalID(id)
		if !ok || canon != id {
			t.Fatalf("exportOfName(%q) = %q, not an export id in its canonical form", name, id)
		}
		date, _, _ := strings.Cut(id, "/")
		if !strings.Contains(name, date[:4]) || !strings.Contains(name, date[5:7]) || !strings.Contains(name, date[8:]) {
			t.Fatalf("exportOfName(%q) = %q: a date the name does not hold", name, id)
		}
	})
}
