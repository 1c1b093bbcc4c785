package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/zalando/go-keyring"
)

// Service is the service name of the CLI's keys in the system keychain;
// the account is the profile's name.
const Service = "synthient"

// OfficialAccount is the keychain account, under Service, of the official
// Synthient CLI's key: its `synthient auth` keeps its one key there, bare.
// The default profile reads it when it has no key of its own (Store.Get);
// nothing here writes or removes it, and no profile takes its name
// (CheckProfile).
const OfficialAccount = "token"

// CheckProfile refuses a profile name whose keychain entry would be the
// official Synthient CLI's (OfficialAccount): the profile would read the
// official CLI's key as its own, and auth login and logout would replace
// and remove it.
func CheckProfile(name string) error {
	if name == OfficialAccount {
		return fmt.Errorf("profile %s: the name is taken by the official Synthient CLI's key in the system keychain (service %s, account %s), "+
			"which the default profile reads: name the profile otherwise (in config.toml too)", name, Service, OfficialAccount)
	}
	return nil
}

// Keychain is where keys are kept: the system keychain (SystemKeychain),
// or another store a test gives. Get returns ErrNotFound for a key it does
// not hold; any other error means the keychain cannot be used.
type Keychain interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
	Delete(service, account string) error
}

// ErrNotFound is the error of a key a Keychain does not hold.
var ErrNotFound = keyring.ErrNotFound

// SystemKeychain is the system's keychain, through zalando/go-keyring:
// the macOS Keychain, the Windows Credential Manager, the Secret Service
// (GNOME Keyring, KWallet) on Linux. Each call gives up after Timeout: a
// keychain that does not answer (a locked one waiting for a password no
// one types) counts as none.
type SystemKeychain struct {
	Timeout time.Duration
}

// errKeychainTimeout is the error of a keychain call that did not return
// within the timeout.
var errKeychainTimeout = errors.New("the system keychain did not answer")

// Get returns the key kept for account (a profile) of service, or
// ErrNotFound when there is none.
func (k SystemKeychain) Get(service, account string) (string, error) {
	var v string
	err := k.call(func() (err error) { v, err = keyring.Get(service, account); return err })
	return v, err
}

// Set keeps secret as the key of account of service, replacing any.
func (k SystemKeychain) Set(service, account, secret string) error {
	return k.call(func() error { return keyring.Set(service, account, secret) })
}

// Delete removes the key of account of service; ErrNotFound when there
// is none.
func (k SystemKeychain) Delete(service, account string) error {
	return k.call(func() error { return keyring.Delete(service, account) })
}

// call runs f, giving up after the timeout (f then goes on, on its own
// goroutine, until it returns).
func (k SystemKeychain) call(f func() error) error {
	d := k.Timeout
	if d <= 0 {
		d = 5 * time.Second
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("%w within %s", errKeychainTimeout, d)
	}
}
