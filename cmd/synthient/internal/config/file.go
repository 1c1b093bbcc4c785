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
}

// File is config.toml.
type File struct {
	// Path is the file's path, "" without a configuration directory;
	// Exists reports that the file is there.
	Path     string
	Exists   bool               `toml:"-"`
	Profiles map[string]Profile `toml:"profiles"`
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
// used is a *FileError, also one that is not a regular file or is over
// 1 MiB (see readRegular).
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
	if err := decode(f.Path, b, f); err != nil {
		return nil, err
	}
	f.Exists = true
	for name, p := range f.Profiles {
		if p.MaxRetries != nil && (*p.MaxRetries < 0 || *p.MaxRetries > 16) {
			return nil, &FileError{Path: f.Path, Msg: fmt.Sprintf("profile %s: max_retries must be 0 to 16, not %d", name, *p.MaxRetries)}
		}
	}
	return f, nil
}

// decode decodes the TOML b of path into v, refusing keys v has no field
// for: a typo is named, not ignored.
func decode(path string, b []byte, v any) error {
	md, err := toml.Decode(string(b), v)
	var pe toml.ParseError
	switch {
	case errors.As(err, &pe):
		return &FileError{Path: path, Line: pe.Position.Line, Msg: pe.Message}
	case err != nil:
		return &FileError{Path: path, Msg: err.Error()}
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
