//go:build linux || android || darwin || ios || freebsd || netbsd || openbsd || dragonfly

package storage

import (
	"os"
	"syscall"
)

// unlockFile drops the advisory lock bbolt took on f. Closing f alone is not
// enough when a mapping of the file outlives it, because the mapping keeps the
// open file description, and with it the lock, alive.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
