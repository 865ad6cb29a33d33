//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// helperStatus is the helper's report; there is no helper here.
type helperStatus struct{}

func (helperStatus) status() (int, string) { return 0, "" }

// Available reports whether commands can be sandboxed; there is no sandbox
// on this system.
func Available() (ok bool, why string) {
	return false, "no sandbox is implemented on " + runtime.GOOS
}

// BlocksNetwork reports whether the sandbox can block TCP; it cannot here.
func BlocksNetwork() bool { return false }

// IsolatesNetwork reports whether commands get a network namespace of
// their own; they do not here.
func IsolatesNetwork() bool { return false }

func helperUsable() (bool, string) { return Available() }

// startHelper never runs here, as helperUsable is false; it falls back to
// running the shell directly.
func startHelper(spec Spec) (*Cmd, error) {
	_, why := Available()
	return startDirect(spec, why)
}

func (c *Cmd) signalHelper() {}

func helperMain([]string) int {
	fmt.Fprintln(os.Stderr, "tally: "+helperArg+" is internal to run_shell and not supported on "+runtime.GOOS)
	return 2
}

// Wrap returns cmd itself, as nothing can confine it here, or an
// [UnavailableError] when p.Require is set.
func Wrap(cmd *exec.Cmd, p Policy) (*exec.Cmd, error) {
	if p.Require {
		_, why := Available()
		return nil, &UnavailableError{Why: why}
	}
	return cmd, nil
}
