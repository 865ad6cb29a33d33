//go:build unix

package filehistory

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
