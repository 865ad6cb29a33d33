package trust

import (
	"io/fs"
	"syscall"
)

// stampable is set where a file's change time can be read.
const stampable = true

// stampOf returns the stamp of fi, a result of os.Lstat or os.Stat.
func stampOf(fi fs.FileInfo) (stamp, bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, false
	}
	return stamp{
		dev: uint64(sys.Dev), ino: uint64(sys.Ino), nlink: uint64(sys.Nlink),
		size: fi.Size(), mode: fi.Mode(),
		mtime: sys.Mtim.Nano(), ctime: sys.Ctim.Nano(),
	}, true
}
