package exports

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
)

// exportOfName returns the id of the export the name of file holds
// ("2026-12-06", "2026-12-06/04"), as a download without --out names its
// file (proxies-2026-12-06.parquet, proxies-2026-12-06-04.parquet): a
// date, its parts apart from the name's other words, and the hour of an
// hourly export after it; "" when it holds none. A name that holds two,
// or a date that is not one, is a usage error: which export it means
// cannot be told.
func exportOfName(file string) (string, error) {
	words := strings.FieldsFunc(strings.TrimSuffix(filepath.Base(file), ".parquet"), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var ids []string
	for i := 0; i+2 < len(words); i++ {
		if !digits(words[i], 4) || !digits(words[i+1], 2) || !digits(words[i+2], 2) {
			continue
		}
		id := strings.Join(words[i:i+3], "-")
		if i += 2; i+1 < len(words) && digits(words[i+1], 2) {
			id += "/" + words[i+1]
			i++
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0:
		return "", nil
	case len(ids) > 1:
		return "", clierr.Usagef("%s names two exports (%s): which one to download cannot be told; name the file after one", file, strings.Join(ids, ", "))
	}
	id, ok := canonicalID(ids[0])
	if !ok {
		return "", clierr.Usagef("%s holds %s, which is not the date (and hour) of an export: name the file after one, or otherwise", file, ids[0])
	}
	return id, nil
}

// digits reports whether s is n decimal digits.
func digits(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789") == ""
}

// canonicalID returns the export id id, "latest", "YYYY-MM-DD" or
// "YYYY-MM-DD/HH", with a two-digit hour, as the meta names it; false when
// it is not one.
func canonicalID(id string) (string, bool) {
	if id == "latest" {
		return id, true
	}
	date, hour, hourly := strings.Cut(id, "/")
	if _, err := time.Parse(time.DateOnly, date); err != nil || len(date) != len(time.DateOnly) {
		return "", false
	}
	if !hourly {
		return date, true
	}
	h, err := strconv.Atoi(hour)
	if err != nil || len(hour) < 1 || len(hour) > 2 || hour[0] < '0' || hour[0] > '9' || h > 23 {
		return "", false
	}
	return fmt.Sprintf("%s/%02d", date, h), true
}

// idOfName makes the export downloaded the one the file's name holds, so
// that proxies-2026-12-06.parquet never holds another day's export: when
// the export was not given (given: by ID, --date or --hour), it is the
// one the name holds; one given that differs is a usage error, which
// says how to ask for the one the name holds. A file without an export in
// its name, and stdout, take any.
func (o *DownloadOptions) idOfName(given bool) error {
	if o.Out == "" || o.toStdout() {
		return nil
	}
	named, err := exportOfName(o.Out)
	if err != nil || named == "" {
		return err
	}
	if !given {
		o.ID = named
		return nil
	}
	if asked, _ := canonicalID(o.ID); asked == named {
		return nil
	}
	want := *o
	want.ID, want.Date, want.Hour = "", "", -1
	return clierr.Usagef("%s names the export %s, not %s: to download the one it names: synthient %s; or give the file another name",
		o.Out, named, o.ID, strings.Join(want.words(!o.official), " "))
}
