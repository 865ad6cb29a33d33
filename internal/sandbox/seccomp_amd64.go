//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

// x32 system calls are the native numbers with this bit set.
const x32Bit = 0x40000000

// socketRules close socket(AF_UNIX) for 64-bit, x32 and 32-bit programs,
// and io_uring, whose requests can create and connect sockets past
// seccomp. A 32-bit program's socketcall multiplexer cannot be inspected,
// so it is closed whole: 32-bit programs get no sockets in the sandbox.
var socketRules = []socketRule{
	{arch: unix.AUDIT_ARCH_X86_64, nr: unix.SYS_SOCKET},
	{arch: unix.AUDIT_ARCH_X86_64, nr: x32Bit | unix.SYS_SOCKET},
	{arch: unix.AUDIT_ARCH_X86_64, nr: unix.SYS_IO_URING_SETUP, anyDomain: true},
	{arch: unix.AUDIT_ARCH_X86_64, nr: x32Bit | unix.SYS_IO_URING_SETUP, anyDomain: true},
	{arch: unix.AUDIT_ARCH_I386, nr: 359},                  // socket
	{arch: unix.AUDIT_ARCH_I386, nr: 102, anyDomain: true}, // socketcall
	{arch: unix.AUDIT_ARCH_I386, nr: 425, anyDomain: true}, // io_uring_setup
}
