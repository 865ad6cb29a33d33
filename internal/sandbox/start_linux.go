package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tally-dev/tally/internal/proc"
)

// isolationBroken is set once the helper failed to set up its namespaces.
var isolationBroken atomic.Bool

// helperStartTimeout bounds how long Start waits for the helper to report
// that the shell started.
const helperStartTimeout = 30 * time.Second

// selfExe is the running binary; re-executing it through /proc keeps
// working when the file was replaced or deleted since Tally started.
const selfExe = "/proc/self/exe"

// helperRequest is what Start tells the helper, as JSON in its argument.
type helperRequest struct {
	Shell   string `json:"shell"`
	Command string `json:"command"`
	// Argv, when set, is run as it is instead of Shell -c Command.
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir"`
	// Parent is Tally's process ID; the helper stops when its parent
	// changes (outside a PID namespace, where it can see its parent).
	Parent int    `json:"parent"`
	Policy Policy `json:"policy"`
	// Isolated is set when the helper was started in new user and PID
	// namespaces (and a network namespace unless the policy allows the
	// network); see isolationFlags.
	Isolated bool `json:"isolated,omitempty"`
	// NoLifeline is set when fd 4 is not a lifeline (see [Wrap]); the
	// helper then relies on its parent-death signal alone.
	NoLifeline bool `json:"no_lifeline,omitempty"`
}

// helperStatus is one line the helper writes to its status pipe (fd 3):
// first whether the shell started and how, last how it ended.
type helperStatus struct {
	Started   bool   `json:"started,omitempty"`
	Sandboxed bool   `json:"sandboxed,omitempty"`
	Why       string `json:"why,omitempty"`
	// Isolated repeats the request's; UnixBlocked says the seccomp filter
	// that refuses Unix sockets is in place.
	Isolated    bool `json:"isolated,omitempty"`
	UnixBlocked bool `json:"unix_blocked,omitempty"`
	// NoIsolation reports that the namespaces could not be set up; Start
	// then runs the command with the subreaper helper.
	NoIsolation bool `json:"no_isolation,omitempty"`
	// Refused is set when the policy requires the sandbox and it could
	// not be applied; Error when the helper failed otherwise.
	Refused bool   `json:"refused,omitempty"`
	Error   string `json:"error,omitempty"`
	Exited  bool   `json:"exited,omitempty"`
	Code    int    `json:"code,omitempty"`
	Signal  int    `json:"signal,omitempty"`
}

// status returns the shell's exit status and a note naming its signal.
func (s *helperStatus) status() (int, string) {
	if s.Signal != 0 {
		return proc.SignalStatus(syscall.Signal(s.Signal))
	}
	return s.Code, ""
}

// helperUsable reports whether Start may re-execute this binary as the
// helper.
func helperUsable() (bool, string) {
	if !helperInstalled.Load() {
		return false, "this program does not include the sandbox helper"
	}
	return true, ""
}

// startHelper runs spec through the helper and waits for it to report that
// the shell started.
func startHelper(spec Spec) (*Cmd, error) {
	req := helperRequest{
		Shell: spec.Shell, Command: spec.Command, Dir: spec.Dir, Parent: os.Getpid(), Policy: spec.Policy,
		Isolated: isolationProbe() && !isolationBroken.Load(),
	}
	cmd, sr, lifeline, err := launchHelper(spec, req)
	if err != nil && req.Isolated {
		// The namespaces worked for the probe but not now (a limit on
		// their number, say): run with the subreaper helper instead.
		req.Isolated = false
		cmd, sr, lifeline, err = launchHelper(spec, req)
	}
	if err != nil {
		return nil, err
	}

	sr.SetReadDeadline(time.Now().Add(helperStartTimeout))
	lines := bufio.NewReader(sr)
	first, err := readStatus(lines)
	if err == nil && first.NoIsolation && req.Isolated {
		// This system lets Tally create the namespaces but not mount a
		// /proc in them: never try again in this process.
		sr.Close()
		lifeline.Close()
		cmd.Wait()
		isolationBroken.Store(true)
		return startHelper(spec)
	}
	if err != nil || !first.Started {
		sr.Close()
		lifeline.Close()
		proc.KillGroup(cmd)
		cmd.Wait()
		switch {
		case err != nil:
			return nil, fmt.Errorf("the sandbox helper did not start the command: %w", err)
		case first.Refused:
			return nil, &UnavailableError{Why: first.Why}
		default:
			return nil, errors.New(first.Error)
		}
	}
	sr.SetReadDeadline(time.Time{})
	c := &Cmd{cmd: cmd, helper: true, sandboxed: first.Sandboxed, why: first.Why, done: make(chan struct{})}

	// The status pipe ends when the helper exits: fd 3 is close-on-exec
	// in the helper, so the command's processes do not hold it.
	final := make(chan *helperStatus, 1)
	go func() {
		defer sr.Close()
		var last *helperStatus
		for {
			s, err := readStatus(lines)
			if err != nil {
				break
			}
			last = s
		}
		final <- last
	}()
	go func() {
		cmd.Wait()
		lifeline.Close()
		if s := <-final; s != nil && s.Exited {
			c.final = s
		}
		close(c.done)
	}()
	return c, nil
}

// launchHelper starts the helper process for req. It returns the read end
// of the status pipe (fd 3 in the helper) and the write end of the
// lifeline (whose read end is fd 4 in the helper): Tally holds it open
// until the helper ended, so the helper sees end-of-file exactly when Tally
// is gone, even from inside a PID namespace where its parent is invisible.
func launchHelper(spec Spec, req helperRequest) (cmd *exec.Cmd, status, lifeline *os.File, err error) {
	arg, err := json.Marshal(req)
	if err != nil {
		return nil, nil, nil, err
	}
	sr, sw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	lr, lw, err := os.Pipe()
	if err != nil {
		sr.Close()
		sw.Close()
		return nil, nil, nil, err
	}
	cmd = exec.Command(selfExe, helperArg, string(arg))
	cmd.Args[0] = "tally-sandbox"
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout, cmd.Stderr = spec.Output, spec.Output
	cmd.ExtraFiles = []*os.File{sw, lr}
	// A new session without a controlling terminal makes prompts that
	// open /dev/tty fail at once instead of stopping the command, and
	// keeps the terminal's Ctrl-C away from it. SIGTERM, unlike SIGKILL,
	// lets the helper kill the command's processes when Tally dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if req.Isolated {
		var netns uintptr
		if !req.Policy.AllowNetwork {
			netns = syscall.CLONE_NEWNET
		}
		cmd.SysProcAttr = isolationAttr(netns)
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	err = cmd.Start()
	sw.Close()
	lr.Close()
	if err != nil {
		sr.Close()
		lw.Close()
		return nil, nil, nil, err
	}
	return cmd, sr, lw, nil
}

// Wrap returns a command that runs cmd (its program, arguments, folder,
// environment and standard streams) under the sandbox of p, for a
// long-running program whose standard input and output the caller
// connects, such as an MCP server: start it with its Start method or hand
// it to a library that does. The program is confined as a shell command
// is (see the package documentation) and dies with Tally. Where the
// sandbox is unavailable Wrap returns cmd itself, or an [UnavailableError]
// when p.Require is set.
func Wrap(cmd *exec.Cmd, p Policy) (*exec.Cmd, error) {
	if ok, why := Available(); !ok {
		if p.Require {
			return nil, &UnavailableError{Why: why}
		}
		return cmd, nil
	}
	req := helperRequest{
		Argv: append([]string{cmd.Path}, cmd.Args[1:]...), Dir: cmd.Dir, Parent: os.Getpid(), Policy: p,
		Isolated: isolationProbe() && !isolationBroken.Load(), NoLifeline: true,
	}
	if req.Dir == "" {
		req.Dir = p.Workspace
	}
	arg, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	// The helper needs a pipe at fd 3 for its reports; nobody reads them
	// (its exit status is the program's), so the read end is closed at
	// once and the helper's writes fail harmlessly.
	sr, sw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	sr.Close()
	w := exec.Command(selfExe, helperArg, string(arg))
	w.Args[0] = "tally-sandbox"
	w.Dir, w.Env = req.Dir, cmd.Env
	w.Stdin, w.Stdout, w.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	w.ExtraFiles = []*os.File{sw, sw}
	w.SysProcAttr = &syscall.SysProcAttr{}
	if req.Isolated {
		var netns uintptr
		if !p.AllowNetwork {
			netns = syscall.CLONE_NEWNET
		}
		w.SysProcAttr = isolationAttr(netns)
	}
	w.SysProcAttr.Setsid = true
	w.SysProcAttr.Pdeathsig = syscall.SIGTERM
	return w, nil
}

// readStatus reads one status line.
func readStatus(r *bufio.Reader) (*helperStatus, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the helper exited without a report")
		}
		return nil, err
	}
	var s helperStatus
	if err := json.Unmarshal(line, &s); err != nil {
		return nil, fmt.Errorf("the helper sent an unreadable report: %w", err)
	}
	return &s, nil
}

// signalHelper asks the helper to kill the command's processes and exit.
func (c *Cmd) signalHelper() {
	c.cmd.Process.Signal(syscall.SIGTERM)
}
