package keychain

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileStoreKeepsSecretsReadableByTheUserAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tally", FileName)
	s := InFile(path)
	if _, err := s.Get("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on an empty store = %v, want ErrNotFound", err)
	}
	if err := s.Set("a", "secret-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("b", "secret-2"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v (%v), want 0600", st.Mode(), err)
	}
	if v, err := InFile(path).Get("a"); err != nil || v != "secret-1" {
		t.Fatalf("Get(a) = %q, %v", v, err)
	}
	if err := s.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	if err := s.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the file outlived its last secret: %v", err)
	}
	if err := s.Delete("never"); err != nil {
		t.Fatalf("Delete of a missing key = %v", err)
	}
}

func TestDamagedFileSaysWhatToDo(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := InFile(path).Get("a")
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "sign in again") {
		t.Fatalf("err = %v", err)
	}
	if err := InFile(path).Set("a", "b"); err == nil {
		t.Fatal("Set over a damaged file overwrote it silently")
	}
}

func TestDefaultHonoursFileMode(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv(ModeEnv, "off")
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "tally", FileName); s.Where() != want {
		t.Fatalf("Where = %q, want %q", s.Where(), want)
	}
}
