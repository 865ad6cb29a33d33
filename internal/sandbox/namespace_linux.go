package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolationFlags are the namespaces the helper starts in: a user namespace
// (so that an unprivileged user may create the others) and a PID namespace,
// in which the helper is process 1. A process cannot send SIGKILL or
// SIGSTOP to its namespace's process 1, so a command cannot kill or stop
// its helper, and when the helper exits the kernel kills every process left
// in the namespace, whether it called setsid or not.
//
// A mount namespace lets the helper mount a /proc of its own PID namespace:
// the sandbox then sees none of the machine's other processes (their
// command lines and environments stay private), and the thread bookkeeping
// Landlock needs finds the helper's own threads.
const isolationFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS

// isolationProbe reports whether this kernel lets Tally start processes in
// new user, PID and network namespaces: it runs /bin/true in them once.
// Distributions may turn unprivileged user namespaces off; the sandbox then
// falls back to a subreaper helper (see helper.killAll).
var isolationProbe = sync.OnceValue(func() bool {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return false
	}
	cmd := exec.Command(truePath)
	cmd.SysProcAttr = isolationAttr(syscall.CLONE_NEWNET)
	return cmd.Run() == nil
})

// isolationAttr returns the process attributes that start a process in
// new user and PID namespaces (plus extra flags), mapping the caller's user
// and group to themselves so that files keep their owners. Root maps the
// whole range, so files of other users stay theirs too.
func isolationAttr(extra uintptr) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	// CAP_SYS_ADMIN in the new user namespace survives the exec as an
	// ambient capability, for mounting /proc; the helper drops it before
	// it starts the shell (see mountOwnProc).
	attr := &syscall.SysProcAttr{Cloneflags: isolationFlags | extra, AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN}}
	if uid == 0 {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<31 - 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<31 - 1}}
		attr.GidMappingsEnableSetgroups = true
		return attr
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	return attr
}

// IsolatesNetwork reports whether a command whose policy does not allow
// the network runs in a network namespace of its own, with no interface
// but a loopback that is down: then no TCP, UDP, Multipath TCP or abstract
// Unix socket reaches anything outside the command.
func IsolatesNetwork() bool {
	ok, _ := Available()
	return ok && isolationProbe() && !isolationBroken.Load()
}

// mountOwnProc runs in the isolated helper before anything else: it keeps
// its mounts from propagating back to the machine, mounts a /proc of the
// helper's PID namespace over the machine's, makes itself undumpable (so
// the command cannot reach its memory through /proc/1/mem) and drops the
// ambient capability it was started with, so the shell does not inherit
// it.
func mountOwnProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("the sandbox's mounts cannot be made private (%w)", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("the sandbox cannot mount its own /proc (%w)", err)
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
}
