// Package sandbox runs the agent's shell commands so that they cannot
// outlive Tally and, where the kernel allows it, cannot write outside the
// places the user allowed, reach the network or talk to other programs.
//
// On Linux [Start] re-executes the running binary as a small helper (see
// [RunHelperIfRequested], which main must call first). Where the kernel
// allows user namespaces, the helper starts as process 1 of new user, PID
// and mount namespaces (and a network namespace unless the network is
// allowed): the command cannot kill or stop it, sees only its own
// processes in a /proc of its own, and every process it started dies with
// the helper, setsid or not. Elsewhere the helper is a child subreaper that
// walks and kills its descendants. Either way the helper confines itself
// with Landlock (reading and executing the system, toolchain and home
// directories minus their credential stores; writing only the workspace
// and the policy's writable directories; no TCP unless allowed), installs
// a seccomp filter that refuses Unix sockets and io_uring, drops the
// capabilities a root user would otherwise keep, and only then starts the
// shell, which inherits all of it. When the shell exits, when Tally asks
// it to stop, or when Tally dies (its lifeline pipe reads end-of-file), the
// helper kills every process of the command before it exits. Tally itself
// is never confined.
//
// Build caches are not shared with the user's own builds: see
// [PrivateCaches].
//
// Where Landlock is missing, too old or not Linux, [Available] says why;
// commands then run unconfined (still tied to Tally on Linux) unless the
// policy requires the sandbox, in which case [Start] refuses with an
// [UnavailableError].
//
// What stays open: chmod, chown and timestamps outside the workspace are
// not restricted by Landlock; without user namespaces, UDP and Multipath
// TCP are not blocked and a command that kills its helper can leave
// processes behind; 32-bit x86 programs get no sockets at all.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// helperArg is the first argument that turns the binary into the helper.
const helperArg = "__sandbox-exec"

// helperInstalled records that this binary dispatches helperArg to the
// helper, so re-executing it is safe.
var helperInstalled atomic.Bool

// RunHelperIfRequested must be the first statement of main (and of
// TestMain in tests that run commands through [Start]). When the process
// was started by [Start] as the sandbox helper it runs the helper and exits
// without returning; otherwise it records that this binary can serve as the
// helper and returns at once. Without that call [Start] does not re-execute
// the binary and runs commands unconfined.
func RunHelperIfRequested() {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2:]))
	}
	helperInstalled.Store(true)
}

// Policy says what a confined command may write and reach. Everything the
// system, the toolchains named in the command's environment and the home
// directory hold stays readable and executable.
type Policy struct {
	// Workspace is the absolute path of the directory the command works
	// in; it is writable.
	Workspace string `json:"workspace"`
	// Writable lists further absolute directories the command may write,
	// such as the session temp dir and build caches. Missing cache
	// directories are created before the sandbox is applied.
	Writable []string `json:"writable,omitempty"`
	// Readable lists further absolute directories the command may read
	// and run programs from, such as a language server's own install
	// folder; Hidden still applies inside them.
	Readable []string `json:"readable,omitempty"`
	// Hidden lists absolute paths that stay unreadable even inside a
	// readable tree, on top of the credential stores of the home directory
	// (see PrivatePaths): Tally's own data directory, for one.
	Hidden []string `json:"hidden,omitempty"`
	// AllowNetwork lets the command connect to and listen on TCP ports.
	AllowNetwork bool `json:"allow_network,omitempty"`
	// Require makes Start refuse to run the command when the sandbox
	// cannot be applied, instead of running it unconfined.
	Require bool `json:"require,omitempty"`
}

// UnavailableError reports that a command was not run because its policy
// requires the sandbox and the sandbox cannot be applied.
type UnavailableError struct {
	// Why says in a few words why the sandbox cannot be applied.
	Why string
}

func (e *UnavailableError) Error() string {
	return "the sandbox cannot be applied (" + e.Why + ")"
}

// DefaultTempRoot is the folder of the sessions' temporary directories
// when the host names none: tally-UID in the system's temp folder.
func DefaultTempRoot() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("tally-%d", os.Getuid()))
}

// SessionTempDir creates (if needed) and returns the absolute path of the
// private temporary directory of one session, root/sessionID. Root and the
// session's directory must be real directories (not symbolic links) of the
// current user writable by no one else: one that another user made
// first, or a link planted in its place, is refused rather than handed to
// the sandbox as writable. Root is created (0700) when missing; its parent
// may be a shared folder such as /tmp. The caller removes the directory
// (os.RemoveAll) when the session ends.
func SessionTempDir(root, sessionID string) (string, error) {
	if root == "" {
		return "", errors.New("no root directory for session temp dirs was given; pass a folder in Tally's data directory")
	}
	if !validSessionID(sessionID) {
		return "", fmt.Errorf("session ID %q cannot name a directory; use only letters, digits, '.', '_' and '-'", sessionID)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("the session temp root %q cannot be resolved (%w); pass an absolute root", root, err)
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o700); err != nil {
		return "", fmt.Errorf("the folder of the session temp dirs %s cannot be created (%w); check that it is writable", filepath.Dir(root), err)
	}
	dir := filepath.Join(root, sessionID)
	for _, d := range []string{root, dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("the session temp dir %s cannot be created (%w); check that %s is writable", d, err, filepath.Dir(d))
		}
		if err := privateDir(d); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// validSessionID reports whether id is a plain, non-empty file name.
func validSessionID(id string) bool {
	if id == "" || id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// cleanAbs returns the cleaned absolute paths among paths, without "/"
// itself and without duplicates.
func cleanAbs(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if p == "/" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// RunTests serves as the TestMain of a test package whose tests run
// commands: the test binary then doubles as the sandbox helper, exactly as
// the tally binary does, and commands in tests run sandboxed as they do
// for users.
func RunTests(m interface{ Run() int }) {
	RunHelperIfRequested()
	os.Exit(m.Run())
}
