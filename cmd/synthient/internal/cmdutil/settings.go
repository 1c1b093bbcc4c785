package cmdutil

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// Settings are where a run's settings came from, for auth status and the
// errors that name a source.
type Settings struct {
	// Profile is the profile in use, and ProfileFrom what chose it:
	// "--profile", "SYNTHIENT_PROFILE" or "" for the default.
	Profile, ProfileFrom string
	// Config is config.toml (empty when there is none).
	Config *config.File
	// KeyFrom says where the key came from: "--api-key", "--api-key-file
	// FILE", "SYNTHIENT_API_KEY", ".env (PATH)", or where the store
	// keeps it; "" without a key.
	KeyFrom string
	// Kept is the key the store keeps for the profile, when the key was
	// looked for there: its Host is where it may be sent. KeyRefused
	// says why it is not used (the base URL is on another host); nil
	// when it is.
	Kept       config.Kept
	KeyRefused error
}

// Store returns the store of keys of f's configuration.
func (f *Factory) Store() *config.Store {
	return &config.Store{Keychain: f.Keychain, Dir: config.Dir(f.Getenv)}
}

// LoadConfig reads config.toml and picks the profile: --profile, else
// SYNTHIENT_PROFILE, else "default". A profile named explicitly must be
// in config.toml or have a key stored, unless keeping is set (auth login
// and logout, which keep and remove keys). The profile's settings apply
// where no flag (changed reports the flags given) or environment variable
// sets them.
func (f *Factory) LoadConfig(changed func(flag string) bool, keeping bool) error {
	s := &f.Settings
	file, err := config.Load(config.Dir(f.Getenv))
	if err != nil {
		return clierr.New(clierr.Usage, err)
	}
	s.Config = file
	if err := f.pickProfile(); err != nil {
		return err
	}
	p, known := file.Profiles[s.Profile]
	if s.ProfileFrom != "" && !known && !keeping {
		if kept, _, err := f.Store().Get(s.Profile); err != nil || kept.Key == "" {
			return clierr.Usagef("profile %s (from %s): not in %s, and no key stored for it (%s)",
				s.Profile, s.ProfileFrom, orNone(file.Path), f.LoginCommand())
		}
	}
	fl := &f.Flags
	if p.Timeout != nil && !changed("timeout") {
		fl.Timeout = p.Timeout.Duration
	}
	if p.OpenTimeout != nil && !changed("open-timeout") {
		fl.OpenTimeout = p.OpenTimeout.Duration
	}
	if p.MaxRetries != nil && !changed("max-retries") {
		fl.MaxRetries = *p.MaxRetries
	}
	f.profileBase, f.profileBaseFrom = file.BaseURL(s.Profile)
	return nil
}

// pickProfile sets Settings.Profile and ProfileFrom: --profile, else
// SYNTHIENT_PROFILE, else "default". A name config.CheckProfile refuses
// is a usage error.
func (f *Factory) pickProfile() error {
	s := &f.Settings
	s.Profile, s.ProfileFrom = config.DefaultProfile, ""
	switch {
	case f.Flags.Profile != "":
		s.Profile, s.ProfileFrom = f.Flags.Profile, "--profile"
	case f.Getenv("SYNTHIENT_PROFILE") != "":
		s.Profile, s.ProfileFrom = f.Getenv("SYNTHIENT_PROFILE"), "SYNTHIENT_PROFILE"
	}
	if err := config.CheckProfile(s.Profile); err != nil {
		return clierr.Usagef("%v (from %s)", err, s.ProfileFrom)
	}
	return nil
}

func orNone(path string) string {
	if path == "" {
		return "config.toml (no configuration directory: set HOME or XDG_CONFIG_HOME)"
	}
	return path
}

// ResolveKey sets the key, and Settings.KeyFrom, from the first of:
// --api-key-file, --api-key, SYNTHIENT_API_KEY, a .env file in the
// working directory, and the key the store keeps for the profile (the
// system keychain, else credentials.toml), which is used only when the
// base URL is on the host it is bound to (else Settings.KeyRefused says
// why not). It makes the key a secret. With --fake it needs none.
// Reading the key file stops when ctx is done.
func (f *Factory) ResolveKey(ctx context.Context) error {
	fl, s := &f.Flags, &f.Settings
	switch {
	case fl.Fake:
		return nil
	case fl.APIKeyFile != "":
		key, err := config.ReadKeyFile(ctx, fl.APIKeyFile, f.IO.In)
		if err != nil {
			return err
		}
		f.key, s.KeyFrom = key, "--api-key-file "+fl.APIKeyFile
	case fl.APIKey != "":
		f.key, s.KeyFrom = fl.APIKey, "--api-key"
	case f.Getenv("SYNTHIENT_API_KEY") != "":
		f.key, s.KeyFrom = f.Getenv("SYNTHIENT_API_KEY"), "SYNTHIENT_API_KEY"
	default:
		if err := f.keyFromFiles(); err != nil {
			return err
		}
	}
	f.Secrets.Add(f.key)
	return nil
}

// keyFromFiles looks for the key in .env, then in the store.
func (f *Factory) keyFromFiles() error {
	path := filepath.Join(f.WorkDir, ".env")
	key, err := config.ReadDotEnv(path)
	if err != nil {
		return clierr.New(clierr.Usage, err)
	}
	if key != "" {
		f.key, f.Settings.KeyFrom = key, ".env ("+path+")"
		return nil
	}
	s := &f.Settings
	kept, where, err := f.Store().Get(s.Profile)
	if err != nil {
		return clierr.New(clierr.Usage, err)
	}
	if kept.Key == "" {
		return nil
	}
	f.Secrets.Add(kept.Key)
	s.Kept, s.KeyFrom = kept, where.String()+", profile "+s.Profile
	base, from := f.BaseURLFrom()
	host, err := config.HostOf(base)
	switch {
	case err != nil:
		s.KeyRefused = clierr.Usagef("%v (from %s): the key kept for profile %s is not sent to it", err, from, s.Profile)
		return nil
	case host != kept.Host:
		s.KeyRefused = clierr.Usagef("the key kept for profile %s is bound to %s%s, and the base URL %s (from %s) is on %s: "+
			"it is not sent there (run '%s' to keep a key for that host, or give one with --api-key-file or SYNTHIENT_API_KEY)",
			s.Profile, kept.Host, unboundNote(kept), base, from, host, f.LoginCommand())
		return nil
	}
	f.key = kept.Key
	return nil
}

// unboundNote says why a key kept with no host is bound to the default
// one.
func unboundNote(k config.Kept) string {
	switch {
	case k.Official:
		return " (the official Synthient CLI's key, which names no host: the default API's)"
	case k.Unbound:
		return " (kept before keys were bound to a host: the default API's)"
	}
	return ""
}

// LoginCommand returns the auth login command line that keeps a key
// where this command line looks for one: with the profile when one was
// chosen (--profile or SYNTHIENT_PROFILE), the base URL when a flag or
// the environment gave it (the key is bound to its host), and
// XDG_CONFIG_HOME when it moves the configuration directory from
// ~/.config. Each word is quoted for a POSIX shell where it needs to be.
func (f *Factory) LoginCommand() string {
	var w []string
	if x := f.Getenv("XDG_CONFIG_HOME"); x != "" && config.Dir(f.Getenv) != config.Dir(homeOnly(f.Getenv)) {
		w = append(w, "XDG_CONFIG_HOME="+shellQuote(x))
	}
	w = append(w, "synthient", "auth", "login")
	if s := &f.Settings; s.ProfileFrom != "" {
		w = append(w, "--profile", shellQuote(s.Profile))
	}
	if base, from := f.BaseURLFrom(); from == "--base-url" || from == "SYNTHIENT_BASE_URL" {
		w = append(w, "--base-url", shellQuote(base))
	}
	return strings.Join(w, " ")
}

// homeOnly is getenv without XDG_CONFIG_HOME.
func homeOnly(getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return ""
		}
		return getenv(k)
	}
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:@%+=,
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
