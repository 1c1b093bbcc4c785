package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Store keeps the API key of each profile, with the host it is bound to:
// in the system keychain, else (a headless server has none) in the file
// credentials.toml of the configuration directory, with mode 0600. Each
// change of the file reads, changes and replaces it under a lock
// (safefile.Lock) of credentials.toml.lock beside it, so that logins of many processes at
// once each keep their key. A Store is safe for concurrent use when its
// Keychain is.
type Store struct {
	Keychain Keychain
	Dir      string // the configuration directory; "" for none
}

// Kept is a key auth login kept, and the host it is bound to: the key is
// sent only to that host.
type Kept struct {
	Key string
	// Host is the host (see HostOf) of the base URL the key was checked
	// with.
	Host string
	// Unbound reports a key kept with no host, as keys were kept before
	// they were bound to one: Host is then DefaultHost.
	Unbound bool
	// Official reports the official Synthient CLI's key
	// (OfficialAccount), which names no host: Host is then DefaultHost.
	Official bool
}

// Where says where a key is kept.
type Where struct {
	Keychain bool // the system keychain, service Service, account the profile
	// Official is the official Synthient CLI's entry in the keychain
	// (OfficialAccount), with Keychain.
	Official bool
	Path     string // else this file
}

func (w Where) String() string {
	switch {
	case w.Official:
		return "the official Synthient CLI's entry in the system keychain (service " + Service + ", account " + OfficialAccount + ")"
	case w.Keychain:
		return "the system keychain (service " + Service + ")"
	}
	return w.Path
}

// entry is a profile's key in credentials.toml, and what the keychain
// keeps for a profile, as JSON.
type entry struct {
	APIKey string `toml:"api_key" json:"api_key"`
	Host   string `toml:"host,omitempty" json:"host"`
}

// kept returns the Kept of e: bound to DefaultHost when e has no host.
func (e entry) kept() Kept {
	if e.APIKey == "" {
		return Kept{}
	}
	if e.Host == "" {
		return Kept{Key: e.APIKey, Host: DefaultHost, Unbound: true}
	}
	return Kept{Key: e.APIKey, Host: e.Host}
}

// credentials is credentials.toml.
type credentials struct {
	Profiles map[string]entry `toml:"profiles"`
}

// CredentialsPath returns the path of the file of keys, "" without a
// configuration directory.
func (s *Store) CredentialsPath() string {
	if s.Dir == "" {
		return ""
	}
	return filepath.Join(s.Dir, "credentials.toml")
}

// Get returns the key of profile, its host and where it is kept; a
// zero Kept when it is kept nowhere. The keychain is asked first, then
// the file, then, for the default profile, the official Synthient CLI's
// entry (OfficialAccount). A name CheckProfile refuses is an error.
func (s *Store) Get(profile string) (Kept, Where, error) {
	if err := CheckProfile(profile); err != nil {
		return Kept{}, Where{}, err
	}
	secret, err := s.Keychain.Get(Service, profile)
	if err == nil && secret != "" {
		k, err := decodeSecret(secret)
		if err != nil {
			return Kept{}, Where{}, fmt.Errorf("the system keychain's entry of profile %s (service %s): %w", profile, Service, err)
		}
		return k, Where{Keychain: true}, nil
	}
	c, err := s.readCredentials()
	if err != nil {
		return Kept{}, Where{}, err
	}
	k := c.Profiles[profile].kept()
	if k.Key == "" && profile == DefaultProfile {
		if official := s.official(); official.Key != "" {
			return official, Where{Keychain: true, Official: true}, nil
		}
	}
	return k, Where{Path: s.CredentialsPath()}, nil
}

// official returns the official Synthient CLI's key (OfficialAccount),
// bound to DefaultHost, where the official CLI sends it unless told
// otherwise; a zero Kept when there is none or no keychain.
func (s *Store) official() Kept {
	secret, err := s.Keychain.Get(Service, OfficialAccount)
	if key := strings.TrimSpace(secret); err == nil && key != "" {
		return Kept{Key: key, Host: DefaultHost, Official: true}
	}
	return Kept{}
}

// decodeSecret reads what the keychain keeps for a profile: the JSON of
// an entry, or a bare key kept before keys were bound to a host.
func decodeSecret(secret string) (Kept, error) {
	if !strings.HasPrefix(secret, "{") {
		return entry{APIKey: secret}.kept(), nil
	}
	var e entry
	if err := json.Unmarshal([]byte(secret), &e); err != nil || e.APIKey == "" {
		return Kept{}, errors.New("not a key this version can read: run 'synthient auth login' again")
	}
	return e.kept(), nil
}

// Set keeps k (its Key and Host) as profile's: in the keychain, else in
// the file. keychainErr is why the keychain could not be used, when the
// file was.
func (s *Store) Set(profile string, k Kept) (where Where, keychainErr error, err error) {
	if err := CheckProfile(profile); err != nil {
		return Where{}, nil, err
	}
	e := entry{APIKey: k.Key, Host: k.Host}
	secret, err := json.Marshal(e) //nolint:gosec // the keychain entry: keeping the key in it is the point
	if err != nil {
		return Where{}, nil, err
	}
	kerr := s.Keychain.Set(Service, profile, string(secret))
	if kerr == nil {
		// A key left in the file by an earlier login would be found
		// second; it goes.
		if _, err := s.deleteFromFile(profile); err != nil {
			return Where{}, nil, err
		}
		return Where{Keychain: true}, nil, nil
	}
	if s.Dir == "" {
		// kerr is returned on its own, as keychainErr; err only names it,
		// so that the keychain's error does not decide the exit code.
		return Where{}, kerr, fmt.Errorf("no system keychain (%v), and no configuration directory for a file of keys: set HOME or XDG_CONFIG_HOME", kerr) //nolint:errorlint // see above
	}
	err = s.change(func(c *credentials) bool {
		if c.Profiles == nil {
			c.Profiles = map[string]entry{}
		}
		c.Profiles[profile] = e
		return true
	})
	if err != nil {
		return Where{}, kerr, err
	}
	return Where{Path: s.CredentialsPath()}, kerr, nil
}

// Delete removes profile's key from the keychain and the file, and
// returns where it was. The official Synthient CLI's key stays: it is
// that CLI's.
func (s *Store) Delete(profile string) ([]Where, error) {
	if err := CheckProfile(profile); err != nil {
		return nil, err
	}
	var was []Where
	err := s.Keychain.Delete(Service, profile)
	if err == nil {
		was = append(was, Where{Keychain: true})
	}
	found, ferr := s.deleteFromFile(profile)
	if found {
		was = append(was, Where{Path: s.CredentialsPath()})
	}
	return was, ferr
}

// deleteFromFile removes profile from the file, and reports whether it
// was there.
func (s *Store) deleteFromFile(profile string) (found bool, err error) {
	if s.Dir == "" {
		return false, nil
	}
	err = s.change(func(c *credentials) bool {
		_, found = c.Profiles[profile]
		delete(c.Profiles, profile)
		return found
	})
	return found, err
}

// change reads the file of keys, lets edit change it, and replaces it
// when edit reports a change, all under the lock of the file: no change
// of another process falls between the read and the write.
func (s *Store) change(edit func(*credentials) bool) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(s.CredentialsPath() + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	c, err := s.readCredentials()
	if err != nil {
		return err
	}
	if !edit(c) {
		return nil
	}
	return s.writeCredentials(c)
}

// readCredentials reads the file of keys: empty when there is none. A
// file others can read is refused: the keys in it are secrets; so is one
// that is not a regular file or is over 1 MiB (see readRegular).
func (s *Store) readCredentials() (*credentials, error) {
	c := &credentials{}
	path := s.CredentialsPath()
	if path == "" {
		return c, nil
	}
	b, fi, err := readRegular(path, maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &FileError{Path: path, Msg: fmt.Sprintf("others can read it (mode %04o): it holds API keys; chmod 600 %s", fi.Mode().Perm(), path)}
	}
	return c, decode(path, b, c)
}

// writeCredentials replaces the file of keys with c, mode 0600, through
// a new file synced, renamed over it, and the directory synced: a crash
// leaves the old file or the new one. The caller holds the lock.
func (s *Store) writeCredentials(c *credentials) error {
	var b strings.Builder
	b.WriteString("# The API keys of synthient auth login, for profiles where no system keychain\n# was found, each with the host it is sent to. Keep this file private (mode 0600).\n\n")
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".credentials-*.toml")
	if err != nil {
		return err
	}
	// After the rename nothing is there, and Remove fails; before it, a
	// failure leaves a stray file of mode 0600 beside the file of keys.
	defer os.Remove(tmp.Name()) //nolint:errcheck // see above
	// On the way out with an error, Close's error adds nothing to it.
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.CredentialsPath()); err != nil {
		return err
	}
	return syncDir(s.Dir)
}

// syncDir syncs the directory dir, so that a rename in it is on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // the configuration directory
	if err != nil {
		return err
	}
	defer d.Close() //nolint:errcheck // opened read-only: Sync's error is the one that counts
	return d.Sync()
}
