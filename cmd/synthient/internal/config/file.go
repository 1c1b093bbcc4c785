package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// FileError is a file of the configuration that cannot be used: its TOML
// does not parse, it holds a key this version does not know, a value is
// not of its kind, or a file of secrets is readable by others.
type FileError struct {
	Path string
	Line int // from 1; 0 when it is not about one line
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// Dir returns the configuration directory: $XDG_CONFIG_HOME/synthient,
// else $HOME/.config/synthient; "" when neither variable is set.
func Dir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "synthient")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "synthient")
	}
	return ""
}

// DefaultProfile is the profile used when none is named.
const DefaultProfile = "default"

// Profile is a [profiles.NAME] section of config.toml: where the API is
// and how the client talks to it. An unset field leaves the built-in
// default.
type Profile struct {
	BaseURL     string    `toml:"base_url"`
	Timeout     *Duration `toml:"timeout"`
	OpenTimeout *Duration `toml:"open_timeout"`
	MaxRetries  *int      `toml:"max_retries"`
	// Endpoints is the profile's [profiles.NAME.endpoints] section, as
	// the official Synthient CLI writes it.
	Endpoints Endpoints `toml:"endpoints"`
}

// Endpoints is an [endpoints] section of the official Synthient CLI's
// config.toml. Its base_api is the base URL (with /api/v4); its other
// keys (base_feeds, base_grpc) have no meaning here and are not read.
type Endpoints struct {
	BaseAPI string `toml:"base_api"`
}

// File is config.toml.
type File struct {
	// Path is the file's path, "" without a configuration directory;
	// Exists reports that the file is there.
	Path     string
	Exists   bool               `toml:"-"`
	Profiles map[string]Profile `toml:"profiles"`
	// Endpoints is the official Synthient CLI's top-level [endpoints]:
	// its base_api is the base URL of every profile that sets none.
	Endpoints Endpoints `toml:"endpoints"`
	// Ignored are the keys of the file that are not read (the official
	// CLI's, or another program's), sorted: endpoints.base_grpc.
	Ignored []string `toml:"-"`
}

// BaseURL returns the base URL config.toml gives profile, and where it
// comes from: the profile's base_url, else its endpoints.base_api, else
// the top-level [endpoints] base_api; "" when none is set.
func (f *File) BaseURL(profile string) (url, from string) {
	p := f.Profiles[profile]
	switch {
	case p.BaseURL != "":
		return p.BaseURL, "profile " + profile
	case p.Endpoints.BaseAPI != "":
		return p.Endpoints.BaseAPI, "profile " + profile + " (endpoints.base_api)"
	case f.Endpoints.BaseAPI != "":
		return f.Endpoints.BaseAPI, "config.toml [endpoints] base_api"
	}
	return "", ""
}

// Duration is a duration written as Go writes one ("30s", "1m30s").
type Duration struct{ time.Duration }

// UnmarshalText parses a duration, which must be positive.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 30s or 1m", b)
	}
	if v <= 0 {
		return fmt.Errorf("duration %s is not positive", v)
	}
	d.Duration = v
	return nil
}

// maxConfig is the largest config.toml (and credentials.toml) read.
const maxConfig = 1 << 20

// Load reads config.toml of the configuration directory dir (see Dir). A
// missing file, or no directory, is an empty File; a file that cannot be
// used is a *FileError: one that is not a regular file or is over 1 MiB
// (see readRegular), does not parse, has a value not of its kind, or a
// key of a profile this version does not know (with the key it likely
// meant). The official Synthient CLI's sections are read for what has a
// meaning here (base_api); the rest of them, and the sections of other
// programs, are listed in Ignored.
func Load(dir string) (*File, error) {
	f := &File{}
	if dir == "" {
		return f, nil
	}
	f.Path = filepath.Join(dir, "config.toml")
	b, _, err := readRegular(f.Path, maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	md, err := decodeTOML(f.Path, b, f)
	if err != nil {
		return nil, err
	}
	if err := f.sortUndecoded(md); err != nil {
		return nil, err
	}
	f.Exists = true
	for _, name := range f.Names() {
		if p := f.Profiles[name]; p.MaxRetries != nil && (*p.MaxRetries < 0 || *p.MaxRetries > 16) {
			return nil, &FileError{Path: f.Path, Msg: fmt.Sprintf("profile %s: max_retries must be 0 to 16, not %d", name, *p.MaxRetries)}
		}
	}
	return f, nil
}

// profileKeys are the keys of a [profiles.NAME] section.
var profileKeys = []string{"base_url", "timeout", "open_timeout", "max_retries", "endpoints"}

// sortUndecoded puts the keys of config.toml that were not read in
// Ignored, or refuses them: see refusal.
func (f *File) sortUndecoded(md toml.MetaData) error {
	var refused []string
	for _, k := range md.Undecoded() {
		msg, report := refusal(k)
		switch {
		case msg != "":
			if report && !slices.Contains(refused, msg) {
				refused = append(refused, msg)
			}
		case md.Type(k...) != "Hash": // a section is listed by its keys
			f.Ignored = append(f.Ignored, k.String())
		}
	}
	slices.Sort(f.Ignored)
	if len(refused) > 0 {
		return &FileError{Path: f.Path, Msg: strings.Join(refused, "; ")}
	}
	return nil
}

// refusal says why a key of config.toml that was not read is refused,
// "" when it is not: the official CLI's [endpoints] and
// [profiles.NAME.endpoints] are never refused (their keys other than
// base_api have no meaning here), nor is a section of another program. A
// key of a profile that is not one of profileKeys is refused, as are a
// key of a profile outside one and a section that looks like a misspelt
// profiles or endpoints. report is false for a key inside one already
// refused.
func refusal(k toml.Key) (msg string, report bool) {
	switch {
	case k[0] == "endpoints", k[0] == "profiles" && len(k) >= 3 && k[2] == "endpoints":
		return "", false
	case k[0] == "profiles":
		return "unknown key " + k.String() + didYouMean(k[2], profileKeys) +
			" (a profile's keys are " + strings.Join(profileKeys[:4], ", ") + ")", len(k) == 3
	case slices.Contains(profileKeys, k[0]):
		return k[0] + " is a key of a profile: put it in a [profiles.NAME] section (" + DefaultProfile + " when no profile is named)", len(k) == 1
	}
	if hint := didYouMean(k[0], []string{"profiles", "endpoints"}); hint != "" {
		return "unknown section " + k[0] + hint, len(k) <= 2
	}
	return "", false
}

// didYouMean returns ": did you mean X?" for the candidate closest to
// word, when one is close enough to be a likely misspelling (at most two
// edits, or one within the other); "" when none is. base_api, the
// official CLI's name, points to base_url.
func didYouMean(word string, candidates []string) string {
	if word == "base_api" && slices.Contains(candidates, "base_url") {
		return ": did you mean base_url? (or endpoints.base_api, as the official CLI writes it)"
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	for _, c := range candidates {
		if best == "" && len(word) >= 3 && (strings.Contains(c, word) || strings.Contains(word, c)) {
			best = c
		}
	}
	if best == "" {
		return ""
	}
	return ": did you mean " + best + "?"
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// decodeTOML decodes the TOML b of path into v; an error is a *FileError
// naming the line where there is one.
func decodeTOML(path string, b []byte, v any) (toml.MetaData, error) {
	md, err := toml.Decode(string(b), v)
	var pe toml.ParseError
	switch {
	case errors.As(err, &pe):
		return md, &FileError{Path: path, Line: pe.Position.Line, Msg: pe.Message}
	case err != nil:
		return md, &FileError{Path: path, Msg: err.Error()}
	}
	return md, nil
}

// decode decodes the TOML b of path into v, refusing keys v has no field
// for: a typo is named, not ignored.
func decode(path string, b []byte, v any) error {
	md, err := decodeTOML(path, b, v)
	if err != nil {
		return err
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		slices.Sort(keys)
		return &FileError{Path: path, Msg: "unknown key " + strings.Join(keys, ", ")}
	}
	return nil
}

// Names returns the profiles of the file, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Profiles))
	for n := range f.Profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
