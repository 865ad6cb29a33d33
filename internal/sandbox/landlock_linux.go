package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

const (
	// minABI is the oldest Landlock ABI the sandbox uses: ABI 2 (Linux
	// 5.19) lets files move between directories of the workspace.
	minABI = 2
	// netABI is the first Landlock ABI that restricts TCP (Linux 6.7).
	netABI = 4
)

// systemDirs are readable and executable in the sandbox when they exist.
var systemDirs = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/proc", "/sys", "/snap", "/nix/store", "/run/current-system",
}

// deviceFiles are readable and writable in the sandbox when they exist.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// resolverSockets are the name-service sockets a command may reach when the
// network is allowed (Landlock ABI 9 restricts Unix sockets).
var resolverSockets = []string{"/run/systemd/resolve", "/run/nscd", "/var/run/nscd"}

// abi returns the kernel's Landlock ABI version, 0 when it has none.
var abi = sync.OnceValue(func() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
})

// Available reports whether [Start] can confine commands, and if not, why
// in a few words: Linux with Landlock ABI 2 or newer (Linux 5.19) and a
// binary whose main calls [RunHelperIfRequested].
func Available() (ok bool, why string) {
	if ok, why := helperUsable(); !ok {
		return false, why
	}
	return kernelSupport()
}

// BlocksNetwork reports whether the sandbox can block at least TCP
// connections: with a network namespace of the command's own (see
// [IsolatesNetwork]) or with Landlock ABI 4 (Linux 6.7).
func BlocksNetwork() bool {
	ok, _ := Available()
	return ok && (abi() >= netABI || IsolatesNetwork())
}

// kernelSupport reports whether the kernel's Landlock can hold the sandbox.
func kernelSupport() (bool, string) {
	switch v := abi(); {
	case v == 0:
		return false, "this Linux kernel has no Landlock support; Linux 5.19 or newer with Landlock enabled is needed"
	case v < minABI:
		return false, fmt.Sprintf("this Linux kernel's Landlock is too old (ABI %d); Linux 5.19 or newer is needed", v)
	}
	return true, ""
}

// restrict confines the calling process (all its threads) and everything
// it starts afterwards to p. env is the command's environment, which names
// the toolchain directories to keep readable; shell must stay executable.
func restrict(p Policy, env []string, shell string) error {
	writable := cleanAbs(p.Writable)
	for _, d := range writable {
		os.MkdirAll(d, 0o700) // a configured cache that does not exist yet
	}
	readable := append(append(append(append([]string{}, systemDirs...), toolchainDirs(env)...), filepath.Dir(shell)), p.Readable...)
	home, _ := os.UserHomeDir()
	roDirs, roFiles := carve(existingDirs(cleanAbs(readable)), cleanAbs(append(PrivatePaths(home), p.Hidden...)))
	rules := []landlock.Rule{
		landlock.RODirs(roDirs...),
		landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		landlock.RWFiles(deviceFiles...).IgnoreIfMissing(),
		landlock.RWDirs(existingDirs(append([]string{p.Workspace}, writable...))...).WithRefer(),
	}
	cfg := landlock.V11.BestEffort()
	if p.AllowNetwork {
		cfg.HandledAccessNet = 0
		rules = append(rules, landlock.RODirs(existingDirs(resolverSockets)...).WithResolveUnix())
	}
	if err := cfg.Restrict(rules...); err != nil {
		return err
	}
	// Landlock sets no_new_privs when it enforces a ruleset; without it
	// the best-effort mode silently enforced nothing.
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return errors.New("the kernel enforced none of the rules")
	}
	return nil
}

// existingDirs returns the paths of dirs that are directories now.
func existingDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// keptCapabilities are the capabilities a root user keeps in the sandbox:
// those that let it work on files owned by other users, within what
// Landlock allows.
var keptCapabilities = map[int]bool{
	unix.CAP_CHOWN: true, unix.CAP_DAC_OVERRIDE: true, unix.CAP_DAC_READ_SEARCH: true,
	unix.CAP_FOWNER: true, unix.CAP_FSETID: true,
}

// dropCapabilities removes every other capability from the calling
// thread's bounding set, so that a shell it starts as root cannot use raw
// sockets, mount, trace or load modules. Without CAP_SETPCAP (not root)
// there is nothing to drop and it does nothing.
func dropCapabilities() {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if !keptCapabilities[c] {
			unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		}
	}
}
