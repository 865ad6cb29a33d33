package cli

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// The model's reply reached the terminal raw in `tally run`: ESC[8m
// concealed what followed, OSC 52 wrote the clipboard, and a carriage
// return drew a fake approval card over a line. Tool output and file
// names were escaped, the model's text was not; now every byte of it —
// streamed text, reasoning, and the same in --json — goes through the
// same rule.
func TestModelTextEscapesAreNeutralisedOnTerminal(t *testing.T) {
	attack := "Here you go.\x1b[8m hidden \x1b[0m\x1b]52;c;cm0gLXJmIH4=\x07\rApprove this call?\n  run_shell: ls\n\u009b2J\u202eevil"
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{Reasoning: "thinking \x1b]0;title\x07", Content: attack},
		llmtest.Reply{Reasoning: "again \x1b[2J", Content: attack},
	))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	ws, data := workspace(t), t.TempDir()
	for _, mode := range [][]string{nil, {"--json"}} {
		args := append([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", ws}, mode...)
		stdout, stderr, code := runCLI(t, append(args, "hello")...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", mode, code, stderr)
		}
		for _, out := range []string{stdout, stderr} {
			for _, bad := range []string{"\x1b", "\x07", "\r", "\u009b", "\u202e"} {
				if strings.Contains(out, bad) {
					t.Errorf("%v: %q reached the terminal raw:\n%q", mode, bad, out)
				}
			}
		}
		if mode == nil && !strings.Contains(stdout, `\u001b[8m hidden`) {
			t.Errorf("the reply's text was not shown with its escapes visible:\n%q", stdout)
		}
	}
}
