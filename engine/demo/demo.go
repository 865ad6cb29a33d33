// Package demo is Tally's built-in demonstration: a small sample Go project
// with a bug, and a scripted model that walks a real agent session through
// finding and fixing it. The script runs behind llmtest's OpenAI-compatible
// server on loopback, so a newcomer can watch every panel work without an
// API key or a network connection.
package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// ModelName is the model name of demo sessions; a session stored with it is
// reopened against the scripted model.
const ModelName = "tally-demo"

// Prompt is the request the demo session starts with.
const Prompt = "The calculator's Add function gives wrong results. Find the bug, fix it and run the tests."

// files is the sample workspace: a calc package whose Add subtracts.
var files = map[string]string{
	"go.mod":    "module example.com/calc\n\ngo 1.21\n",
	"README.md": "# calc\n\nA tiny calculator package used by Tally's demo.\n",
	"calc/calc.go": `// Package calc does arithmetic on integers.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}

// Mul returns the product of a and b.
func Mul(a, b int) int {
	return a * b
}
`,
	"calc/calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d; want 5", got)
	}
}

func TestMul(t *testing.T) {
	if got := Mul(2, 3); got != 6 {
		t.Errorf("Mul(2, 3) = %d; want 6", got)
	}
}
`,
}

// NewWorkspace writes the sample project into dir, creating it if needed.
// Existing files of the same names are overwritten.
func NewWorkspace(dir string) error {
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("demo: cannot create the sample project in %s (%v); pick a writable folder", dir, err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return fmt.Errorf("demo: cannot write %s (%v); pick a writable folder", p, err)
		}
	}
	return nil
}

// Pace is the pause before each scripted answer, so a person can follow
// the session as it runs.
const Pace = 350 * time.Millisecond

// Script returns the scripted model of the demo. Each answer depends only on
// how far the current turn has come (the assistant messages after the last
// human message) and on the last tool result, so the script is
// deterministic and can be replayed against any number of sessions.
func Script() llmtest.Script {
	return ScriptWithPace(Pace)
}

// ScriptWithPace is Script with a chosen pause before each answer (0 for
// tests).
func ScriptWithPace(pace time.Duration) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		r := reply(req)
		r.Delay = pace
		return r
	})
}

func reply(req *llmtest.Req) llmtest.Reply {
	human, step, last := progress(req.Messages)
	if human < 0 {
		return llmtest.Text("Hello! I am Tally's scripted demo model.")
	}
	if human > 1 {
		// A follow-up turn: the demo only knows one story.
		return llmtest.Text("I am the **scripted demo model**, so I only know the calculator story.\n\n" +
			"Open **Settings** and connect a real model to ask anything else.")
	}
	switch step {
	case 0:
		return llmtest.Reply{
			Reasoning: "The user says Add is wrong. First I should see how the project is laid out, then read the calc package.",
			Content:   "Let me look at the project first.",
			ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{"path":".","depth":2}`}},
		}
	case 1:
		return llmtest.Reply{
			Content:   "There is a `calc` package with a test. Reading the implementation:",
			ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"calc/calc.go"}`}},
		}
	case 2:
		return llmtest.Reply{
			Reasoning: "Add returns a - b, which is the bug. Before changing it, check who calls Add so the fix does not break anything.",
			Content:   "`Add` returns `a - b`. Checking where it is used before changing it:",
			ToolCalls: []llmtest.ToolCall{{Name: "grep", Arguments: `{"pattern":"Add\\(","path":".","glob":"*.go"}`}},
		}
	case 3:
		return llmtest.Reply{
			Content: "Only the test calls it, and the test expects a sum. Fixing the operator:",
			ToolCalls: []llmtest.ToolCall{{Name: "edit_file",
				Arguments: `{"path":"calc/calc.go","old_string":"\treturn a - b","new_string":"\treturn a + b"}`}},
		}
	case 4:
		if denied(last) {
			return llmtest.Text("You declined the edit, so nothing was changed.\n\n" +
				"The fix is one character in `calc/calc.go`:\n\n```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```\n\n" +
				"Send another message if you want me to try again.")
		}
		return llmtest.Reply{
			Content: "Now running the tests:",
			ToolCalls: []llmtest.ToolCall{{Name: "run_shell",
				Arguments: `{"command":"go test ./...","timeout_seconds":120}`}},
		}
	default:
		tests := "The tests pass."
		if denied(last) {
			tests = "You declined running the tests, so they were **not** run; run `go test ./...` yourself to confirm."
		} else if strings.Contains(last, "not found") {
			tests = "Go is not installed here, so the tests were not run; run `go test ./...` where Go is installed."
		} else if strings.Contains(last, "FAIL") {
			tests = "The tests still fail; see the output above."
		}
		return llmtest.Text("## Fixed\n\n" +
			"- **Bug:** `calc.Add` subtracted its arguments (`return a - b`).\n" +
			"- **Fix:** it now returns `a + b` (`calc/calc.go`, one line).\n" +
			"- **Tests:** " + tests + "\n\n" +
			"`Mul` was already correct and is untouched.")
	}
}

// progress finds the human turn the request answers: how many human
// messages there are, how many assistant messages follow the last one, and
// the text of the last tool result.
func progress(msgs []llmtest.Message) (humans, step int, lastTool string) {
	humans = -1
	at := -1
	for i, m := range msgs {
		if m.Role == "user" && isHuman(m.Content) {
			if humans < 0 {
				humans = 0
			}
			humans++
			at = i
		}
	}
	if at < 0 {
		return -1, 0, ""
	}
	for _, m := range msgs[at+1:] {
		switch m.Role {
		case "assistant":
			step++
		case "tool":
			lastTool = m.Content
		}
	}
	return humans, step, lastTool
}

func isHuman(content string) bool {
	t := strings.TrimSpace(content)
	for _, p := range []string{"<agent_status", "<system-reminder", "[CYCLE STATE]", "<diagnostics"} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

func denied(result string) bool {
	r := strings.ToLower(strings.TrimSpace(result))
	return strings.HasPrefix(r, "denied") || strings.Contains(r, "did not approve") || strings.Contains(r, "user denied")
}
