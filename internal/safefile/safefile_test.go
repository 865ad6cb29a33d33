//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadRefusesFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "HEAD")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	// Without O_NONBLOCK this open would wait for a writer forever.
	if _, _, err := Read(p, 100); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Read(FIFO) = %v, want ErrNotRegular", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, _, err := ReadIn(root, "HEAD", 100); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("ReadIn(FIFO) = %v, want ErrNotRegular", err)
	}
}

func TestReadRefusesDevZeroThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "HEAD")
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	// Unbounded, this read grows memory forever.
	if _, _, err := Read(p, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Read(/dev/zero) = %v, want ErrNotRegular", err)
	}
}

func TestReadInRefusesSymlinksAndEscapes(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("API_KEY=xyz"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "real.md"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.md", filepath.Join(dir, "inner.md")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"AGENTS.md", "inner.md"} {
		if _, _, err := ReadIn(root, name, 100); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadIn(%s) = %v, want ErrNotRegular", name, err)
		}
	}
	for _, name := range []string{"../" + filepath.Base(outside) + "/secret", secret} {
		if data, _, err := ReadIn(root, name, 100); err == nil {
			t.Errorf("ReadIn(%s) read %q, want an error", name, data)
		}
	}
}

func TestReadCaps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	data, cut, err := Read(p, 1000)
	if err != nil || len(data) != 1000 || !cut {
		t.Fatalf("Read = %d bytes, cut %v, err %v; want 1000, true, nil", len(data), cut, err)
	}
	data, cut, err = Read(p, 5000)
	if err != nil || len(data) != 5000 || cut {
		t.Fatalf("Read = %d bytes, cut %v, err %v; want 5000, false, nil", len(data), cut, err)
	}
}
