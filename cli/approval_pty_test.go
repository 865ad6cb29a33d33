//go:build linux

package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// The terminal prompt used to cut a command at 200 characters: "echo
// harmless", 250 spaces and "; touch SPOOFED" was shown as a harmless echo
// and ran whole on "y". The prompt must show the whole command, with the
// padding made visible, on a real pseudo-terminal.
func TestTerminalApprovalShowsTheWholeCommand(t *testing.T) {
	command := "echo harmless" + strings.Repeat(" ", 250) + "; touch SPOOFED"
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("run_shell", `{"command":"`+command+`"}`),
		llmtest.Text("ok"),
	))
	defer srv.Close()
	ptmx, tty := openTerminal(t)
	ws := t.TempDir()

	seen := make(chan string, 1)
	go func() {
		// Read what the terminal shows until the question, then answer.
		r := bufio.NewReader(ptmx)
		var shown strings.Builder
		for {
			line, err := r.ReadString(':')
			shown.WriteString(line)
			if err != nil || strings.Contains(shown.String(), "[n]o") {
				break
			}
		}
		seen <- shown.String()
		ptmx.Write([]byte("y\n"))
		// Keep draining so the child never blocks on a full terminal.
		buf := make([]byte, 4096)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
			"--workspace", ws, "--mode", "ask", "hello"}, tty, tty, tty)
	}()
	var shown string
	select {
	case shown = <-seen:
	case <-time.After(60 * time.Second):
		t.Fatal("the approval prompt never appeared on the terminal")
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("tally run did not finish after the answer")
	}
	if !strings.Contains(shown, "; touch SPOOFED") {
		t.Errorf("the prompt hid the end of the command:\n%s", shown)
	}
	if !strings.Contains(shown, "⟨250 spaces⟩") {
		t.Errorf("the prompt did not make the padding visible:\n%s", shown)
	}
	// Approved with the whole command in view, it ran whole.
	if _, err := os.Stat(filepath.Join(ws, "SPOOFED")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
}

// openTerminal opens a pseudo-terminal for `tally run` (skipping the test
// where there is none), closed at the end of the test, with a dummy API
// key in the environment.
func openTerminal(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	t.Setenv("OPENAI_API_KEY", "sk-test")
	return ptmx, tty
}
