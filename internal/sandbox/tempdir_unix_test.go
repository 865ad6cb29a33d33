//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrecreatedWorldWritableTempRootIsUsed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tally-0")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o777) // past the umask
	if _, err := SessionTempDir(root, "s1"); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Errorf("a world-writable root was accepted (err %v)", err)
	}
	if os.Getuid() == 0 {
		os.Chmod(root, 0o700)
		os.Chown(root, 65534, 65534)
		if _, err := SessionTempDir(root, "s1"); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Errorf("a root owned by another user was accepted (err %v)", err)
		}
	}
}

func TestSessionTempDirSwappedForSymlinkIsGranted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tally")
	target := t.TempDir() // stands for ~/.ssh
	if _, err := SessionTempDir(root, "s1"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "s1"))
	if err := os.Symlink(target, filepath.Join(root, "s1")); err != nil {
		t.Fatal(err)
	}
	if dir, err := SessionTempDir(root, "s1"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a session dir that is a link to %s was handed out as %q (err %v)", target, dir, err)
	}
}

func TestSessionTempDirIsPrivate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "tally")
	dir, err := SessionTempDir(root, "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, dir} {
		if fi, err := os.Lstat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v", d, fi.Mode(), err)
		}
	}
}
