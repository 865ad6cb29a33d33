//go:build !unix

package sandbox

import (
	"fmt"
	"os"
)

// privateDir checks that dir is a directory and not a symbolic link; file
// ownership is not checked on this system.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the session temp dir %s cannot be checked (%w); remove it and try again", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("the session temp dir %s is not a plain directory; remove it and try again", dir)
	}
	return nil
}
