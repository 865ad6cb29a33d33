// Package keychain keeps small secrets, such as the OAuth tokens of MCP
// servers, out of Tally's store: in the operating system's keychain (the
// Secret Service on Linux, the Keychain on macOS, the Credential Manager
// on Windows) and, where there is none, in one file that only the user can
// read or write (mode 0600) in the user's config folder.
//
// A secret is never written to both: Set writes the keychain when it
// answers and the file otherwise, and removes the other copy, so Delete
// and a later Get never find a stale one.
package keychain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/tally-dev/tally/internal/userconfig"
)

// ErrNotFound is returned by Get when no secret is kept under the key.
var ErrNotFound = errors.New("no secret is kept under this name")

// service is the name Tally's secrets are filed under in the OS keychain.
const service = "tally"

// FileName is the name of the fallback file in the user's config folder.
const FileName = "credentials.json"

// ModeEnv, set to "off" (or "file", its earlier name), keeps secrets out
// of the OS keychain everywhere: this package's in the file, the API key
// in the settings.
const ModeEnv = "TALLY_KEYCHAIN"

// osTimeout bounds one call to the OS keychain: a keychain that does not
// answer (a locked Secret Service with no one to unlock it) counts as
// none.
const osTimeout = 3 * time.Second

// maxFile bounds the fallback file that is read.
const maxFile = 4 << 20

// Store is one place for secrets. Its methods are safe for concurrent use
// by one process.
type Store struct {
	file  string
	useOS bool
	mu    sync.Mutex
}

// Default is the user's store: the OS keychain when there is one (see
// Unavailable), and the file credentials.json in the user's config
// folder otherwise.
func Default() (*Store, error) {
	path, err := userconfig.File(FileName)
	if err != nil {
		return nil, err
	}
	return &Store{file: path, useOS: Unavailable() == ""}, nil
}

// InFile is a store that keeps secrets only in the file at path.
func InFile(path string) *Store { return &Store{file: path} }

// Unavailable says why the OS keychain is not asked, or "" when it is.
// On Linux the Secret Service lives on the desktop session bus: without
// one (a server, CI, a plain SSH login) there is nothing to ask, and
// asking could start a bus of its own. TALLY_KEYCHAIN=off turns the
// keychain off everywhere.
func Unavailable() string {
	if v := os.Getenv(ModeEnv); v == "off" || v == "file" {
		return "the keychain is turned off (" + ModeEnv + "=" + v + ")"
	}
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
		if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
			return ""
		}
		if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
			if _, err := os.Stat(filepath.Join(dir, "bus")); err == nil {
				return ""
			}
		}
		return "no desktop session bus, so no Secret Service keychain"
	}
	return ""
}

// OS is the operating system's keychain alone, each call bounded by a
// timeout and refused when Unavailable says so.
type OS struct{}

// Get reads the secret kept under key; a missing one matches
// keyring.ErrNotFound.
func (OS) Get(key string) (string, error) {
	return osCall(func() (string, error) { return keyring.Get(service, key) })
}

// Set keeps secret under key.
func (OS) Set(key, secret string) error {
	_, err := osCall(func() (string, error) { return "", keyring.Set(service, key, secret) })
	return err
}

// Delete removes the secret kept under key; a missing one is no error.
func (OS) Delete(key string) error {
	_, err := osCall(func() (string, error) { return "", keyring.Delete(service, key) })
	if errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}

// Where says where a secret set now would be kept, for messages.
func (s *Store) Where() string {
	if s.useOS {
		return "the system keychain"
	}
	return s.file
}

// Get returns the secret kept under key, or ErrNotFound.
func (s *Store) Get(key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.useOS {
		v, err := OS{}.Get(key)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, keyring.ErrNotFound) && !errors.Is(err, errNoAnswer) {
			return "", fmt.Errorf("the system keychain could not be read (%w); unlock it, or set %s=file to keep secrets in %s", err, ModeEnv, s.file)
		}
	}
	m, err := s.readFile()
	if err != nil {
		return "", err
	}
	v, ok := m[key]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

// Set keeps value under key, replacing what was kept there.
func (s *Store) Set(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.useOS {
		if err := (OS{}).Set(key, value); err == nil {
			return s.editFile(func(m map[string]string) { delete(m, key) })
		}
	}
	return s.editFile(func(m map[string]string) { m[key] = value })
}

// Delete removes the secret kept under key; a key with none is no error.
func (s *Store) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.useOS {
		if err := (OS{}).Delete(key); err != nil && !errors.Is(err, errNoAnswer) {
			return fmt.Errorf("the system keychain could not remove the secret (%w); remove the entry %q of service %q by hand", err, key, service)
		}
	}
	return s.editFile(func(m map[string]string) { delete(m, key) })
}

var errNoAnswer = errors.New("the system keychain did not answer")

// osCall runs one keychain call, giving up after osTimeout.
func osCall(f func() (string, error)) (string, error) {
	if why := Unavailable(); why != "" {
		return "", errors.New(why)
	}
	type answer struct {
		v   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := f()
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-time.After(osTimeout):
		return "", errNoAnswer
	}
}

func (s *Store) readFile() (map[string]string, error) {
	m := map[string]string{}
	f, err := os.Open(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the credentials file %s cannot be read (%w); check its permissions", s.file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxFile {
		return nil, fmt.Errorf("the credentials file %s is not a regular file of at most 4 MB; remove it and sign in again", s.file)
	}
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("the credentials file %s is damaged (%w); remove it and sign in again", s.file, err)
	}
	return m, nil
}

// editFile changes the file's secrets and writes them back, atomically
// and readable by the user alone; an edit that leaves the file empty
// removes it.
func (s *Store) editFile(edit func(map[string]string)) error {
	m, err := s.readFile()
	if err != nil {
		return err
	}
	n := len(m)
	edit(m)
	if len(m) == 0 {
		if n == 0 {
			return nil
		}
		if err := os.Remove(s.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the credentials file %s cannot be removed (%w); remove it by hand", s.file, err)
		}
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the folder %s cannot be created (%w); check its permissions", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".credentials-*")
	if err != nil {
		return fmt.Errorf("the credentials file cannot be written in %s (%w); check its permissions", dir, err)
	}
	defer os.Remove(tmp.Name())
	if err := writeClose(tmp, append(data, '\n')); err != nil {
		return fmt.Errorf("the credentials file %s cannot be written (%w); check the folder's permissions", s.file, err)
	}
	if err := os.Rename(tmp.Name(), s.file); err != nil {
		return fmt.Errorf("the credentials file %s cannot be replaced (%w); check the folder's permissions", s.file, err)
	}
	return nil
}

// writeClose makes f readable by its owner alone, writes data to it,
// syncs and closes it.
func writeClose(f *os.File, data []byte) error {
	err := f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
