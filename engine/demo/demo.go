// Package demo is Tally's built-in demonstration: a small sample Go project
// with a bug, and a scripted model that walks a real agent session through
// finding and fixing it. The script (Answer) is deterministic and reads
// what really happened from the request: its answers, its hand-off brief
// and its recollection from the archive report the test run's real
// outcome. Model runs the script in process, streaming its text and
// reporting token usage with a simulated prompt cache the way a server
// would, so a newcomer can watch every panel work without an API key or a
// network connection.
package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
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
			return fmt.Errorf("cannot create the sample project in %s (%w); pick a writable folder", dir, err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return fmt.Errorf("cannot write the sample project file %s (%w); pick a writable folder", p, err)
		}
	}
	return nil
}

// Pace is the pause before each scripted answer of the app's demo model,
// so a person can follow the session as it runs.
const Pace = 350 * time.Millisecond
