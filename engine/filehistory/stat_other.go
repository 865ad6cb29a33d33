//go:build !linux

package filehistory

import "io/fs"

// statExtra returns nothing extra on platforms where it is not wired up;
// size, modification time and mode still detect changes.
func statExtra(fs.FileInfo) (ino uint64, ctime int64, nlink uint64) { return 0, 0, 1 }
