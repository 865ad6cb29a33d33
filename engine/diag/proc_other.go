//go:build !unix

package diag

import (
	"errors"
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
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
