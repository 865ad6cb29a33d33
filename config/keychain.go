package config

import (
	"slices"

	oskeychain "github.com/tally-dev/tally/internal/keychain"
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

// keychainUser names the API key's entry in the keychain (service
// "tally", see package keychain).
const keychainUser = "api-key"

// OSKeychain is the operating system's keychain (keychain.OS): each call
// bounded by a timeout, and none made where no keychain can answer.
type OSKeychain = oskeychain.OS

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
		k, err := keychain.Get(keychainUser)
		s.APIKey, s.keyUnread = k, err != nil
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
			if s.KeyStore == KeyInKeychain && s.keyUnread {
				return s // kept there but not read this time: left as it is
			}
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

// profileUser names the key of profile name in the keychain.
func profileUser(name string) string { return "profile:" + name }

// loadProfileKeys fills the keys of s's profiles from the keychain and
// moves keys still in the database there, as loadKey does for the main
// key; it reports whether the stored settings must be rewritten.
func loadProfileKeys(s *Settings) (migrate bool) {
	if len(s.Profiles) == 0 {
		return false
	}
	s.Profiles = append([]Profile(nil), s.Profiles...)
	for i := range s.Profiles {
		p := &s.Profiles[i]
		switch {
		case keychain == nil:
			if p.APIKey != "" {
				p.KeyStore = KeyInDatabase
			}
		case p.KeyStore == KeyInKeychain:
			k, err := keychain.Get(profileUser(p.Name))
			p.APIKey, p.keyUnread = k, err != nil
		case p.APIKey != "":
			if keychain.Set(profileUser(p.Name), p.APIKey) == nil {
				p.KeyStore, migrate = KeyInKeychain, true
			} else {
				p.KeyStore = KeyInDatabase
			}
		}
	}
	return migrate
}

// storeProfileKeys is storeKey for the profiles' keys: it returns the
// profiles to write, each key blanked where the keychain took it, and
// forgets the keychain entries of the profiles in before that are gone
// or lost their key.
func storeProfileKeys(profiles, before []Profile) []Profile {
	out := make([]Profile, len(profiles))
	for i, p := range profiles {
		if p.KeyEnv != "" {
			p.APIKey = "" // the variable holds it; nothing to keep
		}
		switch {
		case p.APIKey == "" && p.KeyEnv == "" && p.KeyStore == KeyInKeychain && p.keyUnread:
			// Kept there but not read this time: left as it is.
		case p.APIKey == "":
			p.KeyStore = ""
		case keychain != nil && keychain.Set(profileUser(p.Name), p.APIKey) == nil:
			p.KeyStore, p.APIKey = KeyInKeychain, ""
		default:
			p.KeyStore = KeyInDatabase
		}
		out[i] = p
	}
	if keychain == nil {
		return out
	}
	for _, b := range before {
		if b.KeyStore != KeyInKeychain {
			continue
		}
		i := slices.IndexFunc(out, func(p Profile) bool { return p.Name == b.Name })
		if i < 0 || out[i].KeyStore != KeyInKeychain {
			_ = keychain.Delete(profileUser(b.Name))
		}
	}
	return out
}
