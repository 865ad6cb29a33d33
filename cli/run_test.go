package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Run from a script with standard input from /dev/null (a character
// device, not a terminal), `tally run` showed the whole approval question
// for every call and read no answer. Without a terminal it now says once
// that the calls that need approval are denied, and how to allow them.
func TestRunWithoutATerminalSaysOnceThatApprovalsAreDenied(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, stdin := range map[string]io.Reader{"/dev/null": null, "a pipe": strings.NewReader("y\ny\n")} {
		ws := workspace(t)
		calc, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go"))
		var out, errb bytes.Buffer
		// "turn one" edits calc/calc.go and writes NOTES.md: two calls
		// that ask in the ask mode.
		code := Main([]string{"run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
			"--workspace", ws, "--mode", "ask", "turn one"}, stdin, &out, &errb)
		got := errb.String()
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, got)
		}
		if n := strings.Count(got, "not a terminal"); n != 1 || !strings.Contains(got, "--yes") {
			t.Errorf("%s: the notice shows %d times (want once, naming --yes):\n%s", name, n, got)
		}
		if strings.Contains(got, "[y]es") || strings.Contains(got, "Approve this call") {
			t.Errorf("%s: the approval question was printed with nobody to answer it:\n%s", name, got)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go")); string(b) != string(calc) {
			t.Errorf("%s: a call that needed approval changed calc/calc.go", name)
		}
		if _, err := os.Stat(filepath.Join(ws, "NOTES.md")); err == nil {
			t.Errorf("%s: a call that needed approval wrote NOTES.md", name)
		}
	}
}
