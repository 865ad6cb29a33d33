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

	"github.com/tally-dev/tally/internal/proc"
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
// process group was killed, in case a process escaped the group.
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
// sh -c) in the workspace root with stdin from /dev/null, in its own process
// group that is killed on timeout, on cancellation and when the command
// exits, and reports the combined output (capped at Env.OutputLimit, head
// and tail kept) and the exit status. A non-zero exit status makes the
// result an error. It needs approval.
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

	out := newCapWriter(env.outputLimit())
	exitCode, note, runErr := runCommand(ctx, shell, p.Command, ws, timeout, out)
	if runErr != nil {
		return errorf(name, "the command could not be started (%v); check that a shell is installed", runErr)
	}

	var b strings.Builder
	text := out.String()
	if text == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	if note != "" {
		b.WriteString(note)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "exit status %d", exitCode)
	return Result{Content: b.String(), IsError: exitCode != 0 || note != ""}
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

// runCommand runs command with shell -c in dir, writing its combined output
// to out. It returns the exit status and a note when the command was
// stopped by the timeout or by ctx.
func runCommand(ctx context.Context, shell, command, dir string, timeout time.Duration, out io.Writer) (code int, note string, err error) {
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = dir
	cmd.Stdin = nil // /dev/null
	cmd.Env = append(os.Environ(),
		"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "TERM=dumb", "NO_COLOR=1")
	proc.StartInGroup(cmd)

	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, "", err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return 0, "", err
	}
	pw.Close() // the command's processes hold the only write ends now

	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-waited:
	case <-timer.C:
		proc.KillGroup(cmd)
		<-waited
		note = fmt.Sprintf("timed out after %s; the command and its child processes were killed", seconds(timeout))
	case <-ctx.Done():
		proc.KillGroup(cmd)
		<-waited
		note = "cancelled; the command and its child processes were killed"
	}
	// Stop anything the command left running in the background; this also
	// closes the last write ends of the output pipe.
	proc.KillGroup(cmd)
	select {
	case <-copied:
	case <-time.After(drainGrace):
		// A process escaped the group and still holds the pipe.
	}
	pr.Close()
	<-copied

	code, signal := proc.ExitStatus(cmd.ProcessState)
	if signal != "" && note == "" {
		note = signal
	}
	return code, note, nil
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
func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total <= w.limit {
		return strings.ToValidUTF8(string(w.head), "\uFFFD")
	}
	tail := w.tail
	if len(tail) > w.limit {
		tail = tail[len(tail)-w.limit:]
	}
	const hint = "the output was too long; filter it (for example with grep, head or tail) to see the omitted part"
	if len(w.head)+len(tail) == w.total {
		// Nothing was dropped yet; truncate the whole text normally.
		return strings.ToValidUTF8(truncate(string(w.head)+string(tail), w.limit, hint), "\uFFFD")
	}
	headLen := w.limit / 2
	head := cutHead(string(w.head), headLen)
	t := cutTail(string(tail), w.limit-headLen)
	return strings.ToValidUTF8(joinEnvelope(head, t, w.total, hint), "\uFFFD")
}
