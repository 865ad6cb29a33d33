//go:build !unix

package proc

import (
	"errors"
	"os"
	"os/exec"
)

// StartInGroup is a no-op on systems without Unix process groups.
func StartInGroup(cmd *exec.Cmd) {}

// KillGroup kills the command's process; children it started may survive
// on systems without Unix process groups.
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// ExitStatus returns the command's exit status.
func ExitStatus(ps *os.ProcessState) (int, string) {
	return ps.ExitCode(), ""
}
