package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/tally-dev/tally/internal/proc"
)

const (
	// statusFD is the helper's status pipe (Start's ExtraFiles[0]).
	statusFD = 3
	// lifelineFD reads end-of-file when Tally is gone (ExtraFiles[1]).
	lifelineFD = 4
	// parentCheckInterval is how often the helper checks that Tally, its
	// parent, is still alive, in case the parent-death signal was lost.
	parentCheckInterval = 250 * time.Millisecond
	// killRounds and killRoundPause bound the loop that kills the
	// command's processes: each round kills every descendant found.
	killRounds     = 2000
	killRoundPause = 5 * time.Millisecond
)

// helperExitUsage, helperExitRefused and helperExitNoShell are the helper's
// own exit statuses when it does not get to run the command.
const (
	helperExitUsage   = 2
	helperExitRefused = 126
	helperExitNoShell = 127
)

// helper is the state of the sandbox helper process.
type helper struct {
	req       helperRequest
	status    *os.File
	shell     int  // the shell's process ID
	isolated  bool // process 1 of its own PID namespace
	shellDone bool
	shellWait syscall.WaitStatus
}

// helperMain is the helper's main function; it returns the exit status.
func helperMain(args []string) int {
	// The parent-death signal, the capability bounding set and the
	// shell's own parent-death signal all belong to this thread.
	runtime.LockOSThread()
	var st syscall.Stat_t
	if err := syscall.Fstat(statusFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		fmt.Fprintln(os.Stderr, "tally: "+helperArg+" is internal to run_shell; do not run it by hand")
		return helperExitUsage
	}
	syscall.CloseOnExec(statusFD)
	syscall.CloseOnExec(lifelineFD)
	h := &helper{status: os.NewFile(statusFD, "status")}
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &h.req) != nil {
		h.report(helperStatus{Error: "the sandbox helper got a malformed request; this is a bug in Tally"})
		return helperExitUsage
	}
	return h.run()
}

// run starts the shell, waits for it or for a reason to stop, then kills
// everything below the helper and reports how the shell ended.
func (h *helper) run() int {
	if err := proc.SetChildSubreaper(); err != nil {
		h.report(helperStatus{Error: fmt.Sprintf("the command's processes cannot be tied to Tally (%v); this Linux kernel is too old", err)})
		return helperExitRefused
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGCHLD)
	h.isolated = h.req.Isolated && os.Getpid() == 1
	if h.isolated {
		if err := mountOwnProc(); err != nil {
			h.report(helperStatus{Error: err.Error(), NoIsolation: true})
			return helperExitRefused
		}
	}
	if !h.isolated && os.Getppid() != h.req.Parent {
		return helperExitRefused // Tally died before the helper got going
	}
	parentGone := make(chan struct{})
	if !h.req.NoLifeline {
		go h.watchLifeline(parentGone)
	}

	sandboxed, unixBlocked, why := false, false, ""
	if ok, w := kernelSupport(); !ok {
		why = w
	} else if err := restrict(h.req.Policy, os.Environ(), h.program()); err != nil {
		why = fmt.Sprintf("Landlock refused the rules: %v", err)
	} else {
		sandboxed = true
		dropCapabilities()
		if err := blockUnixSockets(); err != nil {
			why = err.Error()
		} else {
			unixBlocked = true
		}
	}
	if !sandboxed && h.req.Policy.Require {
		h.report(helperStatus{Refused: true, Why: why})
		return helperExitRefused
	}

	argv := []string{filepath.Base(h.req.Shell), "-c", h.req.Command}
	if len(h.req.Argv) > 0 {
		argv = h.req.Argv
	}
	pid, err := syscall.ForkExec(h.program(), argv, &syscall.ProcAttr{
		Dir:   h.req.Dir,
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		h.report(helperStatus{Error: fmt.Sprintf("%s could not be started (%v); check that it is installed", h.program(), err)})
		return helperExitNoShell
	}
	h.shell = pid
	h.report(helperStatus{Started: true, Sandboxed: sandboxed, Why: why, Isolated: h.isolated, UnixBlocked: unixBlocked})

	ticker := time.NewTicker(parentCheckInterval)
	defer ticker.Stop()
	for !h.shellDone {
		select {
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				h.killAll()
			}
		case <-parentGone:
			parentGone = nil
			h.killAll()
		case <-ticker.C:
			if !h.isolated && os.Getppid() != h.req.Parent {
				h.killAll()
			}
		}
		h.reap()
	}
	// Background processes do not outlive the command.
	h.killAll()

	final := helperStatus{Exited: true}
	if h.shellWait.Signaled() {
		final.Signal = int(h.shellWait.Signal())
		final.Code, _ = proc.SignalStatus(h.shellWait.Signal())
	} else {
		final.Code = h.shellWait.ExitStatus()
	}
	h.report(final)
	return final.Code
}

// program is the file the helper executes: the shell, or Argv[0].
func (h *helper) program() string {
	if len(h.req.Argv) > 0 {
		return h.req.Argv[0]
	}
	return h.req.Shell
}

// watchLifeline closes gone when Tally is gone: nothing is ever written to
// the lifeline, so its read ends exactly when Tally's end closes.
func (h *helper) watchLifeline(gone chan struct{}) {
	var b [1]byte
	os.NewFile(lifelineFD, "lifeline").Read(b[:])
	close(gone)
}

// report writes one status line; a write error means Tally is gone and
// changes nothing.
func (h *helper) report(s helperStatus) {
	b, _ := json.Marshal(s)
	h.status.Write(append(b, '\n'))
}

// reap collects every exited child without blocking, noting the shell's
// status, and reports whether any child is left.
func (h *helper) reap() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false // ECHILD: no child at all
		}
		if pid <= 0 {
			return true
		}
		if pid == h.shell {
			h.shellDone, h.shellWait = true, ws
		}
	}
}

// killAll kills every process below the helper, round after round, until
// none is left. As process 1 of its own PID namespace the helper kills the
// whole namespace (kill -1 reaches every process in it but the helper);
// otherwise it walks its descendants: processes orphaned by the kill are
// reparented to the helper (a subreaper) and found in the next round.
func (h *helper) killAll() {
	if !h.shellDone && h.shell > 0 {
		syscall.Kill(h.shell, syscall.SIGKILL)
	}
	if h.isolated {
		for range killRounds {
			syscall.Kill(-1, syscall.SIGKILL)
			if !h.reap() {
				return
			}
			time.Sleep(killRoundPause)
		}
		return
	}
	self := os.Getpid()
	for range killRounds {
		h.reap()
		pids, err := proc.Descendants(self)
		if err != nil || len(pids) == 0 {
			break
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(killRoundPause)
	}
	h.reap()
}
