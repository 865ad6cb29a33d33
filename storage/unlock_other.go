//go:build !(linux || android || darwin || ios || freebsd || netbsd || openbsd || dragonfly)

package storage

import "os"

// unlockFile is a no-op on systems where bbolt's lock is released by closing
// the file.
func unlockFile(*os.File) {}
