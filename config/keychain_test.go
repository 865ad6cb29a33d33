package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/storage"
)

type memKeychain struct{ m map[string]string }

func (k *memKeychain) Get(n string) (string, error) {
	v, ok := k.m[n]
	if !ok {
		return "", errors.New("not found")
	}
	return v, nil
}
func (k *memKeychain) Set(n, v string) error { k.m[n] = v; return nil }
func (k *memKeychain) Delete(n string) error { delete(k.m, n); return nil }

type brokenKeychain struct{}

func (brokenKeychain) Get(string) (string, error) { return "", errors.New("no keychain") }
func (brokenKeychain) Set(string, string) error   { return errors.New("no keychain") }
func (brokenKeychain) Delete(string) error        { return errors.New("no keychain") }

func openStore(t *testing.T) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tally.db")
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func rawSettings(t *testing.T, st *storage.Store) string {
	t.Helper()
	var raw string
	st.View(func(tx *storage.Tx) error {
		b, err := tx.Setting(settingKey)
		raw = string(b)
		return err
	})
	return raw
}

func TestKeyMovesToTheKeychain(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	st, _ := openStore(t)
	// A key saved by an earlier version sits in the database.
	useKeychain(t, nil)
	if err := Save(st, Settings{BaseURL: "https://api.deepseek.com/v1", APIKey: key}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rawSettings(t, st), key) {
		t.Fatal("without a keychain the key is not in the database")
	}
	kc := &memKeychain{m: map[string]string{}}
	keychain = kc
	s, err := Load(st)
	if err != nil || s.APIKey != key || s.KeyStore != KeyInKeychain {
		t.Fatalf("Load = key %q store %q err %v; want the key from the keychain", Mask(s.APIKey), s.KeyStore, err)
	}
	if strings.Contains(rawSettings(t, st), key) {
		t.Error("the key is still in the database after moving to the keychain")
	}
	if kc.m[keychainUser] != key {
		t.Error("the keychain does not hold the key")
	}
	// Saving again keeps it out of the database; clearing removes it.
	if err := Save(st, s); err != nil || strings.Contains(rawSettings(t, st), key) {
		t.Fatalf("Save wrote the key to the database (err %v)", err)
	}
	s.APIKey = ""
	if err := Save(st, s); err != nil || kc.m[keychainUser] != "" {
		t.Fatalf("clearing the key left it in the keychain (err %v)", err)
	}
}

func TestKeyFallsBackToTheDatabaseLabelled(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	st, _ := openStore(t)
	useKeychain(t, brokenKeychain{})
	if err := Save(st, Settings{APIKey: key}); err != nil {
		t.Fatal(err)
	}
	s, err := Load(st)
	if err != nil || s.APIKey != key || s.KeyStore != KeyInDatabase {
		t.Fatalf("Load = %q / %q / %v; want the key, labelled as kept in the database", Mask(s.APIKey), s.KeyStore, err)
	}
}

// useKeychain makes Load and Save use k until the test ends.
func useKeychain(t *testing.T, k Keychain) {
	prev := keychain
	keychain = k
	t.Cleanup(func() { keychain = prev })
}
