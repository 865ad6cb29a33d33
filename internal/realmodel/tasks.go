package realmodel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Task is one small job of the evaluation: the files its workspace
// starts with, the prompt of its one turn, and a checker that says
// whether the job was done.
type Task struct {
	Name string
	// Kind groups tasks in the tables: create, rename, fix, answer,
	// checklist.
	Kind   string
	Files  map[string]string
	Prompt string
	// Check looks at the workspace after the turn and at what the turn
	// left: the final answer and the last checklist the session showed.
	Check func(ws string, out Outcome) error
}

// Outcome is what a task's turn left besides the workspace.
type Outcome struct {
	// Answer is the text of the turn's assistant messages, joined.
	Answer string
	// Checklist is the session's checklist after the turn (its items'
	// contents and statuses), empty when it kept none.
	Checklist []ChecklistItem
}

// ChecklistItem is one item of Tally's checklist.
type ChecklistItem struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Setup writes the task's files into ws.
func (t Task) Setup(ws string) error {
	for name, body := range t.Files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fileIs checks that file name of ws holds want, ignoring surrounding
// white space.
func fileIs(name, want string) func(string, Outcome) error {
	return func(ws string, _ Outcome) error {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			return fmt.Errorf("%s was not written", name)
		}
		if strings.TrimSpace(string(b)) != strings.TrimSpace(want) {
			return fmt.Errorf("%s holds %q, not %q", name, clip(string(b)), want)
		}
		return nil
	}
}

// fileMatches checks that file name matches every pattern in must and
// none in mustNot.
func fileMatches(name string, must, mustNot []string) func(string, Outcome) error {
	return func(ws string, _ Outcome) error {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			return fmt.Errorf("%s is missing", name)
		}
		for _, p := range must {
			if !regexp.MustCompile(p).Match(b) {
				return fmt.Errorf("%s does not match %s", name, p)
			}
		}
		for _, p := range mustNot {
			if regexp.MustCompile(p).Match(b) {
				return fmt.Errorf("%s still matches %s", name, p)
			}
		}
		return nil
	}
}

// pythonPasses runs a Python file of ws and checks that it exits 0.
func pythonPasses(file string) func(string, Outcome) error {
	return func(ws string, _ Outcome) error {
		return runPython(ws, file)
	}
}

func runPython(ws, file string) error {
	cmd := exec.Command("python3", file)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("python3 %s ran over 30 s", file)
	}
	if err != nil {
		return fmt.Errorf("python3 %s failed: %s", file, clip(lastLine(string(out))))
	}
	return nil
}

// all checks every one of checks in turn.
func all(checks ...func(string, Outcome) error) func(string, Outcome) error {
	return func(ws string, o Outcome) error {
		for _, c := range checks {
			if err := c(ws, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// answers checks that the final answer says one of the words, as a
// word of its own (the 3 of "python3" is not an answer of 3), case not
// minded.
func answers(words ...string) func(string, Outcome) error {
	return func(_ string, o Outcome) error {
		for _, w := range words {
			if regexp.MustCompile(`(?i)(^|\W)` + regexp.QuoteMeta(w) + `($|\W)`).MatchString(o.Answer) {
				return nil
			}
		}
		return fmt.Errorf("the answer %q says none of %q", clip(o.Answer), words)
	}
}

// checklist checks the checklist the turn left: each item of want is
// there (its words, case not minded) with the status given ("" for any);
// where the session kept no checklist (the arm without one), a Markdown
// checklist in the answer counts, "[x]" for completed.
func checklist(want map[string]string) func(string, Outcome) error {
	return func(_ string, o Outcome) error {
		items := o.Checklist
		if len(items) == 0 {
			items = markdownChecklist(o.Answer)
		}
		if len(items) == 0 {
			return errors.New("no checklist was kept")
		}
	next:
		for words, status := range want {
			for _, it := range items {
				if strings.Contains(strings.ToLower(it.Content), strings.ToLower(words)) {
					if status != "" && it.Status != status {
						return fmt.Errorf("the item %q is %s, not %s", it.Content, it.Status, status)
					}
					continue next
				}
			}
			return fmt.Errorf("no checklist item says %q", words)
		}
		return nil
	}
}

var mdItem = regexp.MustCompile(`(?m)^\s*[-*]\s*\[([ xX])\]\s*(.+)$`)

func markdownChecklist(s string) []ChecklistItem {
	var out []ChecklistItem
	for _, m := range mdItem.FindAllStringSubmatch(s, -1) {
		st := "pending"
		if m[1] != " " {
			st = "completed"
		}
		out = append(out, ChecklistItem{Content: m[2], Status: st})
	}
	return out
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Tasks are the evaluation's tasks, in the order they run.
func Tasks() []Task {
	return []Task{
		// Create a file with given content.
		{Name: "create-hello", Kind: "create",
			Prompt: `Create a file named hello.txt whose whole content is the line: Hello, world!`,
			Check:  fileIs("hello.txt", "Hello, world!")},
		{Name: "create-version", Kind: "create",
			Prompt: `Write the text 1.2.3 into a new file called VERSION.`,
			Check:  fileIs("VERSION", "1.2.3")},
		{Name: "create-json", Kind: "create",
			Prompt: `Create config.json containing exactly this JSON: {"debug": true}`,
			Check:  fileMatches("config.json", []string{`^\s*\{\s*"debug"\s*:\s*true\s*\}\s*$`}, nil)},
		{Name: "create-nested", Kind: "create",
			Prompt: `Create the file notes/todo.md with the single line: - buy milk`,
			Check:  fileIs("notes/todo.md", "- buy milk")},
		{Name: "create-python", Kind: "create",
			Files:  map[string]string{"test_greet.py": "from greet import greet\nassert greet() == \"hi\", greet()\nprint(\"ok\")\n"},
			Prompt: `Create greet.py with a function greet() that returns the string "hi". test_greet.py checks it.`,
			Check:  pythonPasses("test_greet.py")},

		// Rename a function (or a name) everywhere it is used.
		{Name: "rename-add", Kind: "rename",
			Files: map[string]string{
				"mathutil.py": "def add(a, b):\n    return a + b\n",
				"main.py":     "from mathutil import add\nprint(add(2, 3))\n",
			},
			Prompt: `Rename the function add in mathutil.py to sum_two, and update main.py which calls it.`,
			Check: all(fileMatches("mathutil.py", []string{`def sum_two\(`}, []string{`def add\(`}),
				fileMatches("main.py", []string{`sum_two`}, []string{`\badd\b`}), pythonPasses("main.py"))},
		{Name: "rename-js", Kind: "rename",
			Files:  map[string]string{"util.js": "function oldName(x) {\n  return x * 2;\n}\nmodule.exports = { oldName };\n"},
			Prompt: `In util.js, rename the function oldName to double everywhere in the file.`,
			Check:  fileMatches("util.js", []string{`function double\(`, `double }`}, []string{`oldName`})},
		{Name: "rename-var", Kind: "rename",
			Files:  map[string]string{"counter.py": "cnt = 0\nfor _ in range(3):\n    cnt += 1\nprint(cnt)\n"},
			Prompt: `In counter.py, rename the variable cnt to count.`,
			Check:  all(fileMatches("counter.py", []string{`\bcount\b`}, []string{`\bcnt\b`}), pythonPasses("counter.py"))},
		{Name: "rename-class", Kind: "rename",
			Files:  map[string]string{"shapes.py": "class Foo:\n    sides = 4\n\nprint(Foo.sides)\n"},
			Prompt: `Rename the class Foo in shapes.py to Square, including where it is used.`,
			Check:  all(fileMatches("shapes.py", []string{`class Square\b`}, []string{`\bFoo\b`}), pythonPasses("shapes.py"))},

		// Fix an obvious typo so a test passes.
		{Name: "fix-greeting", Kind: "fix",
			Files: map[string]string{
				"greeting.py":      "def greeting():\n    return \"Helo, world\"\n",
				"test_greeting.py": "from greeting import greeting\nassert greeting() == \"Hello, world\", greeting()\nprint(\"ok\")\n",
			},
			Prompt: `test_greeting.py fails because of a typo in greeting.py. Fix the typo.`,
			Check:  pythonPasses("test_greeting.py")},
		{Name: "fix-number", Kind: "fix",
			Files: map[string]string{
				"settings.py":      "TIMEOUT = 3O\n",
				"test_settings.py": "from settings import TIMEOUT\nassert TIMEOUT == 30\nprint(\"ok\")\n",
			},
			Prompt: `settings.py has a typo: the letter O instead of the digit 0 in TIMEOUT. Fix it so test_settings.py passes.`,
			Check:  pythonPasses("test_settings.py")},
		{Name: "fix-name", Kind: "fix",
			Files: map[string]string{
				"names.py":      "def full_name(first, last):\n    return first + \" \" + lst\n",
				"test_names.py": "from names import full_name\nassert full_name(\"Ada\", \"Lovelace\") == \"Ada Lovelace\"\nprint(\"ok\")\n",
			},
			Prompt: `names.py misspells the parameter last as lst. Fix it so test_names.py passes.`,
			Check:  pythonPasses("test_names.py")},
		{Name: "fix-operator", Kind: "fix",
			Files: map[string]string{
				"calc.py":      "def mul(a, b):\n    return a + b\n",
				"test_calc.py": "from calc import mul\nassert mul(3, 4) == 12, mul(3, 4)\nprint(\"ok\")\n",
			},
			Prompt: `mul in calc.py adds instead of multiplying. Fix it so test_calc.py passes.`,
			Check:  pythonPasses("test_calc.py")},

		// Answer a question from a file.
		{Name: "answer-port", Kind: "answer",
			Files:  map[string]string{"README.md": "# Service\n\nThe server listens on port 8080.\n"},
			Prompt: `Read README.md. Which port does the server listen on? Answer with the number.`,
			Check:  answers("8080")},
		{Name: "answer-owner", Kind: "answer",
			Files:  map[string]string{"config.yaml": "name: billing\nowner: alice\nreplicas: 2\n"},
			Prompt: `Who is the owner in config.yaml?`,
			Check:  answers("alice")},
		{Name: "answer-version", Kind: "answer",
			Files:  map[string]string{"VERSION": "4.2.0\n"},
			Prompt: `What version is in the file VERSION?`,
			Check:  answers("4.2.0")},
		{Name: "answer-day", Kind: "answer",
			Files:  map[string]string{"notes.txt": "Team notes.\nThe meeting is on Tuesday.\n"},
			Prompt: `According to notes.txt, on which day is the meeting?`,
			Check:  answers("tuesday")},
		{Name: "answer-count", Kind: "answer",
			Files:  map[string]string{"fruits.txt": "apple\nbanana\ncherry\n"},
			Prompt: `How many lines does fruits.txt have?`,
			Check:  answers("3", "three")},

		// Keep a checklist.
		{Name: "checklist-plan", Kind: "checklist",
			Prompt: `Make a checklist with three items: write a.txt, write b.txt, review. Do not do them yet.`,
			Check:  checklist(map[string]string{"a.txt": "", "b.txt": "", "review": ""})},
		{Name: "checklist-first", Kind: "checklist",
			Prompt: `Keep a checklist with two items: "create a.txt" and "create b.txt". Create a.txt containing A, then mark that item completed.`,
			Check:  all(fileIs("a.txt", "A"), checklist(map[string]string{"a.txt": "completed", "b.txt": ""}))},
		{Name: "checklist-both", Kind: "checklist",
			Prompt: `Keep a checklist of two items, "x.txt" and "y.txt". Create x.txt containing x and y.txt containing y, completing each item as you go.`,
			Check:  all(fileIs("x.txt", "x"), fileIs("y.txt", "y"), checklist(map[string]string{"x.txt": "completed", "y.txt": "completed"}))},
		{Name: "checklist-answer", Kind: "checklist",
			Files:  map[string]string{"README.md": "# Tool\n\nIt is written in Rust.\n"},
			Prompt: `Keep a checklist: "read README.md", "answer". Then tell me which language the tool is written in, completing both items.`,
			Check:  all(answers("rust"), checklist(map[string]string{"readme": "completed", "answer": "completed"}))},
	}
}
