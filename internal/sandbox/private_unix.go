//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// privateDir checks that dir is a directory, not a symbolic link, owned by
// the current user and writable by no one else.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the session temp dir %s cannot be checked (%w); remove it and try again", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("the session temp dir %s is a symbolic link, which the sandbox would follow; remove it and try again", dir)
	case !fi.IsDir():
		return fmt.Errorf("the session temp dir %s is not a directory; remove it and try again", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("the session temp dir %s belongs to another user; remove it, or set TMPDIR to a folder of your own, and try again", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("the session temp dir %s is writable by other users (mode %o); remove it and try again", dir, fi.Mode().Perm())
	}
	return nil
}
