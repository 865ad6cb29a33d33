package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/internal/gitsafe"
	"github.com/tally-dev/tally/internal/sandbox"
)

//go:embed run_shell.md
var runShellDoc string

// RunShellParams are the arguments of run_shell.
type RunShellParams struct {
	// Command is the shell command line.
	Command string `json:"command"`
	// TimeoutSeconds optionally bounds the run; zero means Env.ShellTimeout,
	// and values above RunShellMaxTimeout are lowered to it.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// RunShellMaxTimeout is the longest time limit a run_shell call may ask for.
const RunShellMaxTimeout = 10 * time.Minute

// drainGrace bounds how long output is still collected after the command's
// processes were killed, in case a process escaped.
const drainGrace = 2 * time.Second

var runShellSpec = Spec{
	Name:        "run_shell",
	Description: strings.TrimSpace(runShellDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"command": {"type": "string", "description": "Shell command line to run in the workspace root."},
			"timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 600, "description": "Time limit in seconds. Default 120."}
		},
		"required": ["command"],
		"additionalProperties": false
	}`),
}

type runShell struct{}

// RunShell returns the run_shell tool: it runs a command with bash -c (or
// sh -c) in the workspace root with stdin from /dev/null and only the
// environment [ShellEnviron] allows, under the sandbox of package
// internal/sandbox where it applies (see [ShellSandboxNote]), and reports
// the combined output (capped at Env.OutputLimit, head and tail kept) and
// the exit status. The command and every process it started are killed on
// timeout, on cancellation, when the command exits and when Tally dies. A
// non-zero exit status makes the result an error; a command run without
// the sandbox carries a "not sandboxed" note, and with Env.RequireSandbox
// it is refused instead. It needs approval.
func RunShell() Tool { return runShell{} }

func (runShell) Spec() Spec          { return runShellSpec }
func (runShell) NeedsApproval() bool { return true }

func (runShell) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "run_shell"
	var p RunShellParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	if strings.TrimSpace(p.Command) == "" {
		return errorf(name, "command is missing; pass the shell command line to run")
	}
	if math.IsNaN(p.TimeoutSeconds) || p.TimeoutSeconds < 0 {
		return errorf(name, "timeout_seconds %v is negative; pass a number of seconds up to %d, or leave it out", p.TimeoutSeconds, int(RunShellMaxTimeout.Seconds()))
	}
	timeout := env.shellTimeout()
	if p.TimeoutSeconds > 0 {
		timeout = time.Duration(min(p.TimeoutSeconds, RunShellMaxTimeout.Seconds()) * float64(time.Second))
	}
	timeout = min(timeout, RunShellMaxTimeout)
	ws, err := env.root()
	if err != nil {
		return errResult(name, err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return errorf(name, "the workspace %q is not an accessible directory; open an existing workspace folder", ws)
	}
	shell, err := findShell()
	if err != nil {
		return errResult(name, err)
	}
	if err := ctx.Err(); err != nil {
		return errorf(name, "the call was cancelled before the command started; call again if still needed")
	}

	cmdEnv, caches := shellEnvironment(env, os.Environ())
	if allowedByRule(ctx) {
		// A rule for `git status` trusts git, not the repository's
		// fsmonitor or hooks.
		for _, kv := range gitsafe.Env() {
			name, _, _ := strings.Cut(kv, "=")
			cmdEnv = setEnvVar(cmdEnv, name, kv)
		}
	}
	policy := shellPolicy(env, ws, caches)
	out := newCapWriter(env.outputLimit())
	if env.Recorder != nil {
		if err := env.Recorder.BeforeShell(); err != nil {
			return errorf(name, "the command was not run because the workspace could not be saved for undo first (%v); free space in Tally's data folder or check its settings, then call again", err)
		}
	}
	run, err := runCommand(ctx, sandbox.Spec{
		Shell: shell, Command: p.Command, Dir: ws, Env: cmdEnv, Policy: policy,
	}, timeout, out)
	recNote := ""
	var changed []string
	if env.Recorder != nil {
		var rerr error
		if changed, rerr = env.Recorder.AfterShell(); rerr != nil {
			recNote = fmt.Sprintf("note: the changes this command made could not be recorded (%v), so they cannot be undone with a rewind", rerr)
		}
	}
	var unavailable *sandbox.UnavailableError
	if errors.As(err, &unavailable) {
		return errorf(name, "the command was not run: %s and the settings require it; enable Landlock in the kernel or turn off the sandbox requirement", unavailable.Error())
	}
	if err != nil {
		return errorf(name, "the command could not be started (%v); check that a shell is installed", err)
	}

	res := Result{Paths: changed, Wrote: len(changed) > 0}
	var b strings.Builder
	text := out.Redacted(res.redact)
	if text == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, n := range []string{run.note, run.sandboxNote(text, policy), recNote} {
		if n != "" {
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "exit status %d", run.code)
	res.Content, res.IsError = b.String(), run.code != 0 || run.note != ""
	return res
}

// findShell returns bash when it is installed and sh otherwise.
func findShell() (string, error) {
	for _, sh := range []string{"bash", "sh"} {
		if path, err := exec.LookPath(sh); err == nil {
			return path, nil
		}
	}
	return "", errors.New("neither bash nor sh was found; install a POSIX shell to run commands")
}

// shellRun is how a command ended.
type shellRun struct {
	code int
	// note says why the command was stopped (timeout, cancellation,
	// signal); it makes the result an error.
	note string
	// sandboxed reports whether the sandbox was applied, and why not.
	sandboxed bool
	why       string
}

// runCommand runs spec (through the sandbox where it applies), writing its
// combined output to out, and stops it with every process it started on
// timeout, on cancellation of ctx and when it exits.
func runCommand(ctx context.Context, spec sandbox.Spec, timeout time.Duration, out io.Writer) (shellRun, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return shellRun{}, err
	}
	spec.Output = pw
	cmd, err := sandbox.Start(spec)
	pw.Close() // the command's processes hold the only write ends now
	if err != nil {
		pr.Close()
		return shellRun{}, err
	}
	var run shellRun
	run.sandboxed, run.why = cmd.Sandboxed()

	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-cmd.Done():
	case <-timer.C:
		cmd.Stop()
		run.note = fmt.Sprintf("timed out after %s; the command and its child processes were killed", seconds(timeout))
	case <-ctx.Done():
		cmd.Stop()
		run.note = "cancelled; the command and its child processes were killed"
	}
	// Stop anything the command left running in the background; this also
	// closes the last write ends of the output pipe.
	cmd.Stop()
	select {
	case <-copied:
	case <-time.After(drainGrace):
		// A process escaped and still holds the pipe.
	}
	pr.Close()
	<-copied

	code, signal := cmd.ExitStatus()
	run.code = code
	if signal != "" && run.note == "" {
		run.note = signal
	}
	return run, nil
}

// seconds formats d as a number of seconds, such as "2s" or "0.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// capWriter keeps the first and last bytes written to it, up to a limit,
// and counts the rest.
type capWriter struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte // bytes after head, trimmed to the last limit bytes
	total int
}

func newCapWriter(limit int) *capWriter {
	return &capWriter{limit: limit}
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	w.total += n
	if room := w.limit - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		w.tail = append(w.tail, p...)
		if len(w.tail) > 2*w.limit {
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.limit:]...)
		}
	}
	return n, nil
}

// String returns everything written when it fits in the limit, and
// otherwise the head and tail joined by a truncation envelope, cut on UTF-8
// boundaries.
func (w *capWriter) String() string { return w.Redacted(func(s string) string { return s }) }

// Redacted is String with redact applied to the kept head and tail before
// they are cut to size: both hold more than is shown, so a secret that
// straddles a cut is replaced whole rather than leaving a prefix that no
// rule recognises.
func (w *capWriter) Redacted(redact func(string) string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total <= w.limit {
		return strings.ToValidUTF8(redact(string(w.head)), "\uFFFD")
	}
	tail := w.tail
	if len(tail) > w.limit+secretSlack {
		tail = tail[len(tail)-w.limit-secretSlack:]
	}
	head, rest := redact(string(w.head)), redact(string(tail))
	if len(head) >= len(w.head) && len(rest) >= len(tail) {
		head, rest = string(w.head), string(tail) // nothing was redacted; keep the byte counts exact
	}
	return w.join(head, rest)
}

// join cuts the kept head and tail to the limit and joins them with the
// truncation envelope; the caller holds w.mu.
func (w *capWriter) join(headText, tailText string) string {
	tail := []byte(tailText)
	if len(tail) > w.limit {
		tail = tail[len(tail)-w.limit:]
	}
	const hint = "the output was too long; filter it (for example with grep, head or tail) to see the omitted part"
	if len(w.head)+min(len(w.tail), w.limit) == w.total {
		// Nothing was dropped yet; truncate the whole text normally.
		return strings.ToValidUTF8(truncate(headText+string(tail), w.limit, hint), "\uFFFD")
	}
	headLen := w.limit / 2
	head := cutHead(headText, headLen)
	t := cutTail(string(tail), w.limit-headLen)
	return strings.ToValidUTF8(joinEnvelope(head, t, w.total, hint), "\uFFFD")
}
