package config

import (
	"errors"
	"os"
	"runtime"
	"time"

	"github.com/zalando/go-keyring"
)

// Where the API key of the settings is kept (Settings.KeyStore).
const (
	KeyInKeychain = "keychain" // the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)
	KeyInDatabase = "database" // the local store, where no keychain answers
)

// Keychain stores one secret per name. The OS keychain is used through
// github.com/zalando/go-keyring; tests replace it.
type Keychain interface {
	Get(name string) (string, error)
	Set(name, secret string) error
	Delete(name string) error
}

// keychainService and keychainUser name Tally's entry in the keychain.
const (
	keychainService = "tally"
	keychainUser    = "api-key"
)

// keychainTimeout bounds one keychain call: a desktop bus that accepts and
// never answers must not hang the app or a command.
const keychainTimeout = 3 * time.Second

var errKeychainTimeout = errors.New("the keychain did not answer in time")

// OSKeychain is the operating system's keychain.
type OSKeychain struct{}

// Get reads the named secret.
func (OSKeychain) Get(name string) (string, error) {
	return withTimeout(func() (string, error) { return keyring.Get(keychainService, name) })
}

// Set stores the named secret.
func (OSKeychain) Set(name, secret string) error {
	_, err := withTimeout(func() (string, error) { return "", keyring.Set(keychainService, name, secret) })
	return err
}

// Delete removes the named secret; a missing one is not an error.
func (OSKeychain) Delete(name string) error {
	_, err := withTimeout(func() (string, error) { return "", keyring.Delete(keychainService, name) })
	if errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}

func withTimeout(f func() (string, error)) (string, error) {
	if why := keychainUnavailable(); why != "" {
		return "", errors.New(why)
	}
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := f()
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-time.After(keychainTimeout):
		return "", errKeychainTimeout
	}
}

// keychain is the keychain Load and Save use; nil means none (the key
// stays in the database).
var keychain Keychain = OSKeychain{}

// loadKey fills s.APIKey from the keychain when the settings say it is
// there, and moves a key still held in the database into the keychain
// when one answers (the settings are then saved without it by the
// caller). It reports whether the stored settings must be rewritten.
func loadKey(s *Settings) (migrate bool) {
	if keychain == nil {
		if s.APIKey != "" {
			s.KeyStore = KeyInDatabase
		}
		return false
	}
	if s.KeyStore == KeyInKeychain {
		if k, err := keychain.Get(keychainUser); err == nil {
			s.APIKey = k
		}
		return false
	}
	if s.APIKey == "" {
		return false
	}
	if err := keychain.Set(keychainUser, s.APIKey); err != nil {
		s.KeyStore = KeyInDatabase
		return false
	}
	s.KeyStore = KeyInKeychain
	return true
}

// storeKey puts s.APIKey where it belongs before the settings are written
// and returns the settings to write: with the key blanked when the
// keychain took it, with it (labelled as in the database) otherwise.
func storeKey(s Settings) Settings {
	if keychain != nil {
		if s.APIKey == "" {
			if s.KeyStore == KeyInKeychain {
				_ = keychain.Delete(keychainUser)
			}
			s.KeyStore = ""
			return s
		}
		if err := keychain.Set(keychainUser, s.APIKey); err == nil {
			s.KeyStore = KeyInKeychain
			s.APIKey = ""
			return s
		}
	}
	if s.APIKey != "" {
		s.KeyStore = KeyInDatabase
	} else {
		s.KeyStore = ""
	}
	return s
}

// keychainUnavailable says why the OS keychain is not tried, or "". On
// Linux the Secret Service lives on the desktop session bus: without one
// (a server, CI, a plain SSH login) there is nothing to ask, and asking
// could start a bus of its own. TALLY_KEYCHAIN=off turns the keychain off
// everywhere.
func keychainUnavailable() string {
	if os.Getenv("TALLY_KEYCHAIN") == "off" {
		return "the keychain is turned off (TALLY_KEYCHAIN=off)"
	}
	if runtime.GOOS == "linux" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return "no desktop session bus, so no Secret Service keychain"
	}
	return ""
}
