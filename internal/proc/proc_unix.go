//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// StartInGroup makes cmd start in a new process group, so KillGroup can
// kill it with every process it spawns; on Linux the command is also sent
// SIGKILL when the process that started it dies. Call it before cmd.Start.
func StartInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr, syscall.SIGKILL)
}

// KillGroup kills the command's process group, including children it
// started in the background. A group that is already gone is not an error.
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// ExitStatus returns the command's exit status, using the shell convention
// 128+N for a command killed by signal N, and a note naming the signal.
func ExitStatus(ps *os.ProcessState) (int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return SignalStatus(ws.Signal())
	}
	return ps.ExitCode(), ""
}

// SignalStatus returns the shell's exit status 128+N for a process killed by
// signal N, and a note naming the signal.
func SignalStatus(sig syscall.Signal) (int, string) {
	return 128 + int(sig), fmt.Sprintf("killed by signal %d (%s)", int(sig), sig)
}
