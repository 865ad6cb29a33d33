package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketRule is one system call the seccomp filter refuses: nr on arch,
// every call when anyDomain is set, otherwise only calls whose first
// argument (the socket's domain) is AF_UNIX.
type socketRule struct {
	arch      uint32
	nr        uint32
	anyDomain bool
}

// Offsets into struct seccomp_data.
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16 // the low 32 bits on little-endian machines
)

// blockUnixSockets installs a seccomp filter on every thread of the
// calling process (and so on everything it starts afterwards) that makes
// socket(AF_UNIX, …) and io_uring fail with EACCES. Landlock before ABI 9
// does not restrict connect() to a path socket, and an abstract socket has
// no path at all: without this a command could reach the X server, the
// session bus, Docker or Tally's own socket. socketpair stays allowed, so
// programs that talk to their own children keep working. No-new-privileges
// must already be set (Landlock sets it). On an architecture the filter
// does not know, it does nothing and says so.
func blockUnixSockets() error {
	if len(socketRules) == 0 {
		return errors.New("the seccomp filter for Unix sockets is not built for this architecture")
	}
	prog := socketFilter(socketRules)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("the kernel refused the seccomp filter for Unix sockets: %v", errno)
	}
	return nil
}

// socketFilter compiles rules into a classic BPF program: for each rule,
// "arch and number match (and the domain is AF_UNIX) → EACCES"; anything
// else is allowed.
func socketFilter(rules []socketRule) []unix.SockFilter {
	const deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	var p []unix.SockFilter
	stmt := func(code uint16, k uint32) { p = append(p, unix.SockFilter{Code: code, K: k}) }
	jeq := func(k uint32, jt, jf uint8) {
		p = append(p, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf})
	}
	for _, r := range rules {
		// Each block is self-contained: on a mismatch it jumps to the
		// next block; on a match it returns.
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArch)
		if r.anyDomain {
			jeq(r.arch, 0, 3)
			stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompNr)
			jeq(r.nr, 0, 1)
			stmt(unix.BPF_RET|unix.BPF_K, deny)
			continue
		}
		jeq(r.arch, 0, 5)
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompNr)
		jeq(r.nr, 0, 3)
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompArg0)
		jeq(unix.AF_UNIX, 0, 1)
		stmt(unix.BPF_RET|unix.BPF_K, deny)
	}
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	return p
}
