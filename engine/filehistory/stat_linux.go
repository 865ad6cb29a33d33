//go:build linux

package filehistory

import (
	"io/fs"
	"syscall"
)

// statExtra returns the inode number and change time of fi, which catch
// changes that keep size and modification time, and its link count.
func statExtra(fi fs.FileInfo) (ino uint64, ctime int64, nlink uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec), uint64(st.Nlink)
	}
	return 0, 0, 1
}
