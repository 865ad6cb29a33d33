package realmodel

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// solution is what a task's turn should leave: files written (over the
// task's own), the answer and the checklist.
type solution struct {
	files     map[string]string
	answer    string
	checklist []ChecklistItem
}

var solutions = map[string]solution{
	"create-hello":   {files: map[string]string{"hello.txt": "Hello, world!\n"}},
	"create-version": {files: map[string]string{"VERSION": "1.2.3"}},
	"create-json":    {files: map[string]string{"config.json": "{\"debug\": true}\n"}},
	"create-nested":  {files: map[string]string{"notes/todo.md": "- buy milk\n"}},
	"create-python":  {files: map[string]string{"greet.py": "def greet():\n    return \"hi\"\n"}},
	"rename-add": {files: map[string]string{
		"mathutil.py": "def sum_two(a, b):\n    return a + b\n",
		"main.py":     "from mathutil import sum_two\nprint(sum_two(2, 3))\n"}},
	"rename-js":        {files: map[string]string{"util.js": "function double(x) {\n  return x * 2;\n}\nmodule.exports = { double };\n"}},
	"rename-var":       {files: map[string]string{"counter.py": "count = 0\nfor _ in range(3):\n    count += 1\nprint(count)\n"}},
	"rename-class":     {files: map[string]string{"shapes.py": "class Square:\n    sides = 4\n\nprint(Square.sides)\n"}},
	"fix-greeting":     {files: map[string]string{"greeting.py": "def greeting():\n    return \"Hello, world\"\n"}},
	"fix-number":       {files: map[string]string{"settings.py": "TIMEOUT = 30\n"}},
	"fix-name":         {files: map[string]string{"names.py": "def full_name(first, last):\n    return first + \" \" + last\n"}},
	"fix-operator":     {files: map[string]string{"calc.py": "def mul(a, b):\n    return a * b\n"}},
	"answer-port":      {answer: "It listens on port 8080."},
	"answer-owner":     {answer: "The owner is alice."},
	"answer-version":   {answer: "Version 4.2.0."},
	"answer-day":       {answer: "On Tuesday."},
	"answer-count":     {answer: "It has 3 lines."},
	"checklist-plan":   {checklist: []ChecklistItem{{"write a.txt", "pending"}, {"write b.txt", "pending"}, {"review", "pending"}}},
	"checklist-first":  {files: map[string]string{"a.txt": "A\n"}, checklist: []ChecklistItem{{"create a.txt", "completed"}, {"create b.txt", "pending"}}},
	"checklist-both":   {files: map[string]string{"x.txt": "x", "y.txt": "y"}, checklist: []ChecklistItem{{"x.txt", "completed"}, {"y.txt", "completed"}}},
	"checklist-answer": {answer: "- [x] read README.md\n- [x] answer\n\nIt is written in Rust."},
}

// Every task's checker fails on the workspace as the task leaves it (so
// doing nothing never passes) and passes on its solution; the Markdown
// checklist of an answer stands in for a session that kept none.
func TestEveryTaskHasAFairChecker(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the Python tasks' checkers run it")
	}
	tasks := Tasks()
	if len(tasks) < 20 {
		t.Errorf("%d tasks; the evaluation has at least 20", len(tasks))
	}
	seen := map[string]bool{}
	for _, task := range tasks {
		t.Run(task.Name, func(t *testing.T) {
			if seen[task.Name] {
				t.Fatal("two tasks have this name")
			}
			seen[task.Name] = true
			sol, ok := solutions[task.Name]
			if !ok {
				t.Fatal("no solution to check the checker with")
			}
			ws := t.TempDir()
			if err := task.Setup(ws); err != nil {
				t.Fatal(err)
			}
			if err := task.Check(ws, Outcome{}); err == nil {
				t.Error("the checker passes a workspace nothing was done in")
			}
			for name, body := range sol.files {
				p := filepath.Join(ws, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := task.Check(ws, Outcome{Answer: sol.answer, Checklist: sol.checklist}); err != nil {
				t.Errorf("the checker fails the solution: %v", err)
			}
		})
	}
}

// An answer counts only as a word of its own: SmolLM2's "python3" once
// passed the question of how many lines a file has.
func TestAnswersAreWords(t *testing.T) {
	check := answers("3", "three")
	for answer, want := range map[string]bool{
		"It has 3 lines.": true, "Three.": true, "3": true,
		`bash -c "python3" -m`: false, "33 lines": false, "threefold": false,
	} {
		if got := check("", Outcome{Answer: answer}) == nil; got != want {
			t.Errorf("%q passes: %v, want %v", answer, got, want)
		}
	}
	if answers("4.2.0")("", Outcome{Answer: "Version 4.2.0."}) != nil {
		t.Error("a version with dots is not found")
	}
}

func TestMarkdownChecklist(t *testing.T) {
	got := markdownChecklist("Plan:\n- [x] first\n* [ ] second\nnot an item\n  - [X] third")
	want := []ChecklistItem{{"first", "completed"}, {"second", "pending"}, {"third", "completed"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
