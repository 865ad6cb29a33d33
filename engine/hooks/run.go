package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/proc"
	"github.com/tally-dev/tally/internal/text"
)

// DefaultOutputLimit caps what is kept of a hook's standard output and of
// its standard error, each.
const DefaultOutputLimit = 64 << 10

// stopGrace is how long a hook that is stopped may take to end before its
// processes are killed outright, and how long its output is still read
// after it exited.
const stopGrace = 2 * time.Second

// Runner runs hooks the way the session's commands run: in the workspace,
// under the sandbox of Env (tool.ConfineProgram: the same writable places,
// network switch and hidden folders as run_shell) and with its
// allow-listed environment (tool.ShellEnviron), plus TALLY_PROJECT_DIR and
// CLAUDE_PROJECT_DIR set to the workspace and Vars.
type Runner struct {
	// Env is the environment of the session's commands; Env.Workspace is
	// the folder hooks run in.
	Env tool.Env
	// Vars are further "NAME=value" variables, set last.
	Vars []string
	// OutputLimit caps stdout and stderr, each; 0 means
	// DefaultOutputLimit.
	OutputLimit int
}

// Run is what one run of a hook did, for the caller and for the settings'
// list of last runs.
type Run struct {
	// HookID, Source, Event, Matcher and Command are the hook's.
	HookID  string `json:"hook_id"`
	Source  Source `json:"source"`
	Event   Event  `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	// Subject is what the hook was matched against: the tool name, the
	// session's start source or the compaction's trigger.
	Subject string `json:"subject,omitempty"`
	// Start and Duration say when it ran and for how long.
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	// Exit is the exit status (128+N for a signal N); -1 when the hook
	// did not run to an end (Err or TimedOut says why).
	Exit     int  `json:"exit"`
	TimedOut bool `json:"timed_out,omitempty"`
	// Stdout and Stderr are the hook's output, capped, valid UTF-8;
	// untrusted text.
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Err says in one sentence why the hook could not run or was
	// stopped; "" when it ran to an exit.
	Err string `json:"error,omitempty"`
	// Outcome is what its answer means (see Parse); set by the caller.
	Outcome Outcome `json:"outcome"`
}

// Short is the run's status and output on one line of at most n runes,
// for a list: "exit 0", "exit 2: <stderr>", "timed out after 10s", ….
func (r Run) Short(n int) string {
	var s string
	switch {
	case r.TimedOut:
		s = "timed out after " + r.Duration.Round(time.Millisecond).String()
	case r.Err != "":
		s = r.Err
	default:
		s = fmt.Sprintf("exit %d", r.Exit)
		out := r.Stderr
		if r.Exit == 0 || out == "" {
			out = r.Stdout
		}
		if line := text.OneLine(out, 0); line != "" {
			s += ": " + line
		}
	}
	return text.OneLine(s, n)
}

// Run runs h with in on its standard input and returns what it did; it
// waits at most h.Limit(), then stops the hook and every process it
// started, as it does when ctx ends. It never panics and never returns
// with the hook still running (a process that escapes the sandbox's kill
// is left to it: its output is no longer read).
func (r Runner) Run(ctx context.Context, h Hook, in Input) Run {
	run := Run{HookID: h.ID, Source: h.Source, Event: h.Event, Matcher: h.Matcher, Command: h.Command, Start: time.Now(), Exit: -1}
	defer func() { run.Duration = time.Since(run.Start) }()
	ws := r.Env.Workspace
	if ws == "" {
		run.Err = "the hook was not run because the session has no workspace folder; open a workspace first"
		return run
	}
	shell, err := findShell()
	if err != nil {
		run.Err = err.Error()
		return run
	}
	if ctx.Err() != nil {
		run.Err = "the hook was not run because the turn was stopped"
		return run
	}
	limit := r.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	env := r.Env
	cmd := exec.Command(shell, "-c", h.Command)
	cmd.Args[0] = filepath.Base(shell)
	cmd.Dir = ws
	cmd.Env = append(tool.ShellEnviron(&env, os.Environ()), "TALLY_PROJECT_DIR="+ws, "CLAUDE_PROJECT_DIR="+ws)
	cmd.Env = append(cmd.Env, r.Vars...)
	cmd.Stdin = bytes.NewReader(in.Encode())
	stdout, stderr := &capBuffer{limit: limit}, &capBuffer{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	proc.StartInGroup(cmd)
	w, err := tool.ConfineProgram(&env, cmd)
	if err != nil {
		run.Err = fmt.Sprintf("the hook was not run because %v", err)
		return run
	}
	w.WaitDelay = stopGrace
	if err := w.Start(); err != nil {
		run.Err = fmt.Sprintf("the hook could not be started (%v); check that a shell is installed", err)
		return run
	}
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	timer := time.NewTimer(h.Limit())
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		run.TimedOut = true
		run.Err = fmt.Sprintf("the hook timed out after %s and was stopped; raise its \"timeout\" in seconds or make it faster", h.Limit())
		waitErr = stop(w, done)
	case <-ctx.Done():
		run.Err = "the hook was stopped because the turn was stopped"
		waitErr = stop(w, done)
	}
	proc.KillGroup(w) // what the hook left running in the background
	run.Stdout, run.Stderr = stdout.String(), stderr.String()
	if run.Err == "" {
		switch {
		case w.ProcessState != nil:
			run.Exit, _ = proc.ExitStatus(w.ProcessState)
		case waitErr != nil:
			run.Err = fmt.Sprintf("the hook's end could not be read (%v)", waitErr)
		}
	}
	return run
}

// stop asks w's process to end (the sandbox helper then kills everything
// the hook started), kills its process group if it has not ended within
// stopGrace, and returns Wait's error.
func stop(w *exec.Cmd, done <-chan error) error {
	if w.Process != nil {
		_ = w.Process.Signal(syscall.SIGTERM)
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	proc.KillGroup(w)
	if w.Process != nil {
		_ = w.Process.Kill()
	}
	return <-done
}

// findShell returns bash when it is installed and sh otherwise.
func findShell() (string, error) {
	for _, sh := range []string{"bash", "sh"} {
		if path, err := exec.LookPath(sh); err == nil {
			return path, nil
		}
	}
	return "", errors.New("the hook was not run because neither bash nor sh was found; install a POSIX shell")
}

// capBuffer keeps the first limit bytes written to it and counts the rest.
type capBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - len(c.buf)
	if room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	if len(p) > room {
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

// String is the kept bytes as valid UTF-8, with a note when bytes were
// dropped.
func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ToValidUTF8(string(c.buf), "\uFFFD")
	if c.dropped > 0 {
		s = fmt.Sprintf("%s\n[%d more bytes of output were dropped]", s, c.dropped)
	}
	return s
}
