//go:build !unix

package tool

import (
	"os"
	"os/exec"
)

// startInGroup is a no-op on systems without Unix process groups.
func startInGroup(cmd *exec.Cmd) {}

// killGroup kills the command's process; children it started may survive on
// systems without Unix process groups.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := cmd.Process.Kill()
	if err == os.ErrProcessDone {
		return nil
	}
	return err
}

// exitStatus returns the command's exit status.
func exitStatus(ps *os.ProcessState) (int, string) {
	return ps.ExitCode(), ""
}
