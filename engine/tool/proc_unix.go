//go:build unix

package tool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// startInGroup puts the command in a new process group, so the whole group
// can be killed.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the command's process group, including children the
// command started in the background. A group that is already gone is not
// an error.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitStatus returns the command's exit status, using the shell convention
// 128+N for a command killed by signal N, and a note naming the signal.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return ps.ExitCode(), ""
}
