package clitest

import (
	"sync"

	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// Keychain is a system keychain in memory, for the tests of many commands
// at once (go-keyring's own mock is one for the whole process, without a
// lock). With Err set, it is a machine without a keychain: every call
// fails with Err. It is safe for concurrent use.
type Keychain struct {
	Err error

	mu   sync.Mutex
	keys map[string]string // service/account -> secret
}

// Get returns the key kept for account of service, config.ErrNotFound
// when there is none, or Err.
func (k *Keychain) Get(service, account string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Err != nil {
		return "", k.Err
	}
	v, ok := k.keys[service+"/"+account]
	if !ok {
		return "", config.ErrNotFound
	}
	return v, nil
}

// Set keeps secret as the key of account of service, unless Err is set.
func (k *Keychain) Set(service, account, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Err != nil {
		return k.Err
	}
	if k.keys == nil {
		k.keys = map[string]string{}
	}
	k.keys[service+"/"+account] = secret
	return nil
}

// Delete removes the key of account of service: config.ErrNotFound
// when there is none, or Err.
func (k *Keychain) Delete(service, account string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Err != nil {
		return k.Err
	}
	if _, ok := k.keys[service+"/"+account]; !ok {
		return config.ErrNotFound
	}
	delete(k.keys, service+"/"+account)
	return nil
}
