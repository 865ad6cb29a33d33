package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tally-dev/tally/internal/proc"
)

// stopGrace bounds how long Stop waits for the helper to kill the
// command's processes before it kills the helper's process group itself.
const stopGrace = 5 * time.Second

// Spec describes one command to run.
type Spec struct {
	// Shell is the absolute path of the shell that runs Command with -c.
	Shell string
	// Command is the shell command line.
	Command string
	// Dir is the working directory, normally the policy's workspace.
	Dir string
	// Env is the command's whole environment (see [Environ]).
	Env []string
	// Output receives the command's standard output and standard error;
	// standard input is /dev/null.
	Output *os.File
	// Policy says what the command may write and reach.
	Policy Policy
}

// Cmd is a command started by [Start]. Its methods may be called from
// different goroutines.
type Cmd struct {
	cmd       *exec.Cmd
	helper    bool // cmd is the sandbox helper, not the shell
	sandboxed bool
	why       string
	done      chan struct{}
	final     *helperStatus // the helper's last report, once done
}

// Start runs spec.Command under the sandbox where it can be applied. On
// Linux, with [RunHelperIfRequested] called by main, the command runs in the
// helper described in the package documentation; otherwise it runs in its
// own process group, killed by [Cmd.Stop]. When spec.Policy.Require is set
// and the sandbox cannot be applied, Start returns an [UnavailableError]
// and runs nothing.
func Start(spec Spec) (*Cmd, error) {
	if ok, why := helperUsable(); !ok {
		if spec.Policy.Require {
			return nil, &UnavailableError{Why: why}
		}
		return startDirect(spec, why)
	}
	if ok, why := Available(); !ok && spec.Policy.Require {
		return nil, &UnavailableError{Why: why}
	}
	return startHelper(spec)
}

// startDirect runs the shell itself in a new process group.
func startDirect(spec Spec, why string) (*Cmd, error) {
	cmd := exec.Command(spec.Shell, "-c", spec.Command)
	cmd.Args[0] = filepath.Base(spec.Shell) // "bash: ..." in error messages
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout, cmd.Stderr = spec.Output, spec.Output
	proc.StartInGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Cmd{cmd: cmd, why: why, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Sandboxed reports whether the sandbox was applied to the command, and if
// not, why in a few words.
func (c *Cmd) Sandboxed() (bool, string) { return c.sandboxed, c.why }

// Done is closed when the command has ended and every process it started
// has been killed (or, without the helper, when the shell has exited).
func (c *Cmd) Done() <-chan struct{} { return c.done }

// Stop kills the command and every process it started, and returns once
// the command has ended. Calling it after the command ended kills what is
// left of its process group.
func (c *Cmd) Stop() {
	select {
	case <-c.done:
		proc.KillGroup(c.cmd)
		return
	default:
	}
	if !c.helper {
		proc.KillGroup(c.cmd)
		<-c.done
		return
	}
	c.signalHelper()
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-c.done:
	case <-timer.C:
		proc.KillGroup(c.cmd) // the helper is stuck; settle for its group
		<-c.done
	}
	proc.KillGroup(c.cmd)
}

// ExitStatus returns the shell's exit status once [Cmd.Done] is closed,
// with the shell convention 128+N for a shell killed by signal N, and then
// a note naming the signal.
func (c *Cmd) ExitStatus() (int, string) {
	<-c.done
	if c.final != nil {
		return c.final.status()
	}
	return proc.ExitStatus(c.cmd.ProcessState)
}
