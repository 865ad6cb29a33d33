//go:build unix

package filehistory

import "syscall"

// openNonblock keeps opening a file that turned into a FIFO from blocking.
const openNonblock = syscall.O_NONBLOCK
