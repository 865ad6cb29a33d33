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

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// ModelName is the model name of demo sessions; a session stored with it is
// reopened against the scripted model.
const ModelName = "tally-demo"

// Prompt is the request the demo session starts with.
const Prompt = "The calculator's Add function gives wrong results. Find the bug, fix it and run the tests."

// The follow-up requests the demo knows, in the order they make sense:
// exploring the project fills the small demo window and triggers a
// compaction; after a new cycle, the last one recalls the fix from the
// archive.
const (
	ExplorePrompt  = "Now explore the rest of the project and summarise how it is organised."
	RecallPrompt   = "What exactly was wrong with Add earlier? Check the archive."
	DelegatePrompt = "Ask two sub-agents in parallel: what does the calc package offer, and what do the design notes require?"
)

// FollowUps are the demo's suggested next prompts.
var FollowUps = []string{ExplorePrompt, RecallPrompt, DelegatePrompt}

// ContextWindow is the context window demo sessions pretend to have, small
// enough that a few file reads reach the compaction threshold.
const ContextWindow = 40_000

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
	"docs/design.md": designDoc(),
	"calc/table.go":  tableGo(),
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

// designDoc is a long design note, so that reading it costs context.
func designDoc() string {
	var b strings.Builder
	b.WriteString("# calc design notes\n\n")
	topics := []string{"overflow", "rounding", "naming", "testing", "errors", "performance", "documentation", "versioning"}
	for i, t := range topics {
		fmt.Fprintf(&b, "## %d. %s\n\n", i+1, t)
		for j := 0; j < 6; j++ {
			fmt.Fprintf(&b, "The %s rules of the calc package keep every operation on plain ints predictable: rule %d.%d says callers check bounds themselves and the package never panics.\n", t, i+1, j+1)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// tableGo is a generated lookup table, another large file.
func tableGo() string {
	var b strings.Builder
	b.WriteString("package calc\n\n// squares holds n*n for small n, generated.\nvar squares = [...]int{\n")
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&b, "\t%d, // %d squared\n", i*i, i)
	}
	b.WriteString("}\n\n// Square returns n*n, from the table when it can.\nfunc Square(n int) int {\n\tif n >= 0 && n < len(squares) {\n\t\treturn squares[n]\n\t}\n\treturn n * n\n}\n")
	return b.String()
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
// the request: which story the last human message asks for, how far the
// turn has come (the assistant messages after it) and the last tool result,
// so the script is deterministic and can be replayed against any session.
// It also answers the engine's own requests: compaction summaries, cycle
// hand-off briefs and purges.
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

func call(content, name, args string) llmtest.Reply {
	return llmtest.Reply{Content: content, ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}}
}

func reply(req *llmtest.Req) llmtest.Reply {
	if len(req.Messages) == 0 {
		return llmtest.Text("Hello! I am Tally's scripted demo model.")
	}
	last := req.Messages[len(req.Messages)-1].Content
	switch {
	case strings.Contains(last, "This cycle is ending"):
		return llmtest.Text("<carry_forward>\nDecisions: calc.Add was fixed (it returned a - b; now a + b) and the tests pass.\n" +
			"Constraints: the calc package never panics; callers check bounds.\nOpen questions: none.\n" +
			"Next: answer the user's questions; recall_archive has the details of the fix.\n</carry_forward>")
	case strings.Contains(last, "Write a summary of the conversation") || strings.Contains(req.Messages[0].Content, "You summarise"):
		return llmtest.Text("The user asked to fix calc.Add, which returned a - b. It was changed to a + b in calc/calc.go and " +
			"`go test ./...` passed. The user then asked for a tour of the project: go.mod, README.md, calc/calc.go, " +
			"calc/table.go (a generated squares table) and docs/design.md (rules on overflow, rounding, naming, testing) were read.")
	case len(req.Tools) == 1 && req.Tools[0] == "purge_context":
		return llmtest.Text("Nothing in this short demo is worth removing; keeping everything.")
	}
	if strings.HasPrefix(req.Messages[0].Content, "# Sub-agent:") {
		return childStory(req)
	}
	human, step, lastTool := progress(req.Messages)
	// A human message may hold several requests joined together (the
	// latest is the last one): answer the one that comes last.
	switch latest(human, Prompt, ExplorePrompt, RecallPrompt, DelegatePrompt) {
	case "":
		if human == "" {
			return llmtest.Text("Hello! I am Tally's scripted demo model.")
		}
	case Prompt:
		return fixStory(step, lastTool)
	case ExplorePrompt:
		// Once the history was compacted the reads before it are gone
		// from the request, so counting steps would start over: answer.
		if strings.Contains(req.Messages[0].Content, compact.SummaryHeading) || seeded(req) {
			step = len(exploreReads)
		}
		return exploreStory(step)
	case RecallPrompt:
		return recallStory(step, lastTool)
	case DelegatePrompt:
		if step == 0 {
			return llmtest.Reply{Content: "Two independent questions: I'll hand each to a sub-agent, so their reading stays out of this conversation.",
				ToolCalls: []llmtest.ToolCall{
					{Name: "task", Arguments: `{"description":"What the calc package offers","prompt":"List the exported functions of the calc package in calc/ with one line each."}`},
					{Name: "task", Arguments: `{"description":"What the design notes require","prompt":"Read docs/design.md and list its rules in one line each."}`},
				}}
		}
		return llmtest.Text("Both sub-agents reported (their reading stayed in their own context):\n\n" +
			"- **calc** offers `Add`, `Mul` and a generated squares table.\n" +
			"- **The design notes** ask for no panics, explicit overflow checks, banker's rounding and table-driven tests.")
	}
	return llmtest.Text("I am the **scripted demo model**, so I only know a few stories. Try one of the suggested prompts, " +
		"or open **Settings** and connect a real model to ask anything else.")
}

// fixStory finds and fixes the bug, keeping a checklist.
func fixStory(step int, last string) llmtest.Reply {
	switch step {
	case 0:
		return call("I'll plan this as a checklist first.", "checklist_write",
			`{"items":[{"content":"Find the bug in Add","status":"in_progress"},{"content":"Fix calc.Add"},{"content":"Run the tests"}]}`)
	case 1:
		return llmtest.Reply{
			Reasoning: "The user says Add is wrong. First I should see how the project is laid out, then read the calc package.",
			Content:   "Let me look at the project.",
			ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{"path":".","depth":2}`}},
		}
	case 2:
		return call("There is a `calc` package with a test. Reading the implementation:", "read_file", `{"path":"calc/calc.go"}`)
	case 3:
		return llmtest.Reply{
			Reasoning: "Add returns a - b, which is the bug. Before changing it, check who calls Add so the fix does not break anything.",
			Content:   "`Add` returns `a - b`. Checking where it is used before changing it:",
			ToolCalls: []llmtest.ToolCall{{Name: "grep", Arguments: `{"pattern":"Add\\(","path":".","glob":"*.go"}`}},
		}
	case 4:
		return call("Found it. Updating the checklist:", "checklist_write",
			`{"items":[{"id":"1","content":"Find the bug in Add","status":"completed"},{"id":"2","content":"Fix calc.Add","status":"in_progress"},{"id":"3","content":"Run the tests"}]}`)
	case 5:
		return call("Only the test calls it, and the test expects a sum. Fixing the operator:", "edit_file",
			`{"path":"calc/calc.go","old_string":"\treturn a - b","new_string":"\treturn a + b"}`)
	case 6:
		if denied(last) {
			return llmtest.Text("You declined the edit, so nothing was changed.\n\n" +
				"The fix is one character in `calc/calc.go`:\n\n```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```\n\n" +
				"Send another message if you want me to try again.")
		}
		return call("Fixed. Ticking that off and moving on to the tests:", "checklist_write",
			`{"items":[{"id":"1","content":"Find the bug in Add","status":"completed"},{"id":"2","content":"Fix calc.Add","status":"completed"},{"id":"3","content":"Run the tests","status":"in_progress"}]}`)
	case 7:
		return call("Now running the tests:", "run_shell", `{"command":"go test ./...","timeout_seconds":120}`)
	case 8:
		return call("", "todo_update", `{"id":"3","status":"completed"}`)
	}
	tests := "The tests pass."
	switch {
	case denied(last):
		tests = "You declined running the tests, so they were **not** run; run `go test ./...` yourself to confirm."
	case strings.Contains(last, "not found"):
		tests = "Go is not installed here, so the tests were not run; run `go test ./...` where Go is installed."
	case strings.Contains(last, "FAIL"):
		tests = "The tests still fail; see the output above."
	}
	return llmtest.Text("## Fixed\n\n" +
		"- **Bug:** `calc.Add` subtracted its arguments (`return a - b`).\n" +
		"- **Fix:** it now returns `a + b` (`calc/calc.go`, one line).\n" +
		"- **Tests:** " + tests + "\n\n" +
		"`Mul` was already correct and is untouched.")
}

// exploreStory reads the large files, which fills the demo's small window.
var exploreReads = []string{
	`{"path":"docs/design.md"}`, `{"path":"calc/table.go"}`, `{"path":"README.md"}`,
	`{"path":"calc/calc_test.go"}`, `{"path":"docs/design.md","offset":20}`, `{"path":"calc/table.go","offset":80}`,
	`{"path":"docs/design.md","offset":40}`, `{"path":"go.mod"}`,
	`{"path":"calc/table.go","offset":400}`, `{"path":"calc/table.go","offset":800}`, `{"path":"calc/table.go","offset":1000}`,
}

func exploreStory(step int) llmtest.Reply {
	if step < len(exploreReads) {
		return call("", "read_file", exploreReads[step])
	}
	return llmtest.Text("## How the project is organised\n\n" +
		"- `calc/calc.go` — `Add` and `Mul` on plain ints.\n" +
		"- `calc/table.go` — a generated table of squares behind `Square`.\n" +
		"- `calc/calc_test.go` — tests for `Add` and `Mul`.\n" +
		"- `docs/design.md` — rules: callers check bounds, the package never panics.\n\n" +
		"Reading all of that filled this demo's small context window. Everything read was still in use, so no " +
		"compaction would have paid for itself: Tally rolled over into a new cycle instead — look for the row in " +
		"the chat and the marker on the chart; the earlier messages are in the Archive.")
}

// recallStory searches the archive of the earlier cycle.
func recallStory(step int, last string) llmtest.Reply {
	if step == 0 {
		return call("That happened in an earlier cycle; searching the archive:", "recall_archive", `{"query":"return a - b"}`)
	}
	if strings.Contains(last, "a - b") {
		return llmtest.Text("From the archive: `calc.Add` returned `a - b` instead of `a + b`. The fix changed that one line in " +
			"`calc/calc.go`, and the tests passed afterwards.")
	}
	return llmtest.Text("The archive has no earlier cycle yet. Press **New cycle** first, then ask again.")
}

// latest returns the prompt that appears last in text, or "".
func latest(text string, prompts ...string) string {
	best, at := "", -1
	for _, p := range prompts {
		if i := strings.LastIndex(text, p); i > at {
			best, at = p, i
		}
	}
	return best
}

// progress finds the human turn the request answers: the text of the last
// human message, how many assistant messages follow it, and the text of the
// last tool result.
func progress(msgs []llmtest.Message) (human string, step int, lastTool string) {
	at := -1
	for i, m := range msgs {
		if m.Role == "user" && isHuman(m.Content) {
			at = i
		}
	}
	if at < 0 {
		return "", 0, ""
	}
	for _, m := range msgs[at+1:] {
		switch m.Role {
		case "assistant":
			step++
		case "tool":
			lastTool = m.Content
		}
	}
	return msgs[at].Content, step, lastTool
}

func isHuman(content string) bool {
	return !llmtest.IsInjected(strings.TrimSpace(content))
}

func denied(result string) bool {
	r := strings.ToLower(strings.TrimSpace(result))
	return strings.HasPrefix(r, "denied") || strings.Contains(r, "did not approve") || strings.Contains(r, "user denied")
}

// seeded reports whether the request starts a new cycle (its first user
// message is the [CYCLE STATE] seed): the reads before it are archived.
func seeded(req *llmtest.Req) bool {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return strings.Contains(m.Content, cycle.SeedMarker)
		}
	}
	return false
}

// childStory is a sub-agent's side of the delegation story: one read, then
// its report.
func childStory(req *llmtest.Req) llmtest.Reply {
	job := ""
	if len(req.Messages) > 1 {
		job = req.Messages[1].Content
	}
	done := false
	for _, m := range req.Messages {
		done = done || m.Role == "tool"
	}
	design := strings.Contains(job, "design.md")
	switch {
	case !done && design:
		return call("Reading the design notes.", "read_file", `{"path":"docs/design.md"}`)
	case !done:
		return call("Looking for the exported functions.", "grep", `{"pattern":"^func [A-Z]","path":"calc"}`)
	case design:
		return llmtest.Text("The design notes require: no panics (callers check bounds); explicit overflow checks; banker's rounding; table-driven tests.")
	}
	return llmtest.Text("calc exports Add (sum), Mul (product) and a generated table of squares.")
}
