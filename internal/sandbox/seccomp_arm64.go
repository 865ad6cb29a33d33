//go:build linux && arm64

package sandbox

import "golang.org/x/sys/unix"

// socketRules close socket(AF_UNIX) for 64-bit and 32-bit ARM programs,
// and io_uring, whose requests can create and connect sockets past
// seccomp.
var socketRules = []socketRule{
	{arch: unix.AUDIT_ARCH_AARCH64, nr: unix.SYS_SOCKET},
	{arch: unix.AUDIT_ARCH_AARCH64, nr: unix.SYS_IO_URING_SETUP, anyDomain: true},
	{arch: unix.AUDIT_ARCH_ARM, nr: 281},                  // socket
	{arch: unix.AUDIT_ARCH_ARM, nr: 425, anyDomain: true}, // io_uring_setup
}
