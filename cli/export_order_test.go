package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// turnWord finds the turn a prompt names.
var turnWord = regexp.MustCompile(`turn (one|two|three|four|five)`)

// orderScript reads a file in each turn and answers "answer to <turn>".
func orderScript() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "Write a summary of the conversation") || strings.Contains(req.Messages[0].Content, "You summarise") {
			return llmtest.Text("Summary: calc/calc.go was read in every turn.")
		}
		if req.ToolResultsSinceHuman() == 0 {
			return llmtest.Call("read_file", `{"path":"calc/calc.go"}`)
		}
		turns := turnWord.FindAllString(req.LastHuman(), -1)
		if len(turns) == 0 {
			return llmtest.Text("no turn named")
		}
		return llmtest.Text("answer to " + turns[len(turns)-1])
	})
}

// inOrder fails unless every want appears in got, each after the one
// before it.
func inOrder(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	at := 0
	for _, w := range wants {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("%s: %q is missing after position %d, or out of order:\n%s", what, w, at, got)
		}
		at += i + len(w)
	}
}

// TestExportsFollowTheHistoryAfterARewindAndACompaction: the Markdown
// and HTML exports give every prompt and answer in the order they
// happened, the rewound turn where it was, marked, and each rewrite where
// it ran.
func TestExportsFollowTheHistoryAfterARewindAndACompaction(t *testing.T) {
	srv := llmtest.New(orderScript())
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	common := []string{"--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat"}
	run := func(text string) {
		t.Helper()
		if _, errOut, code := runCLI(t, append(append([]string{"run"}, common...), "--session", "o", "--workspace", ws, "--yes", text)...); code != 0 {
			t.Fatalf("run %q exited %d: %s", text, code, errOut)
		}
	}
	for _, text := range []string{"turn one", "turn two", "turn three"} {
		run(text)
	}
	if _, errOut, code := runCLI(t, "rewind", "--data", data, "o", "--to", "3", "--chat-only", "--yes"); code != 0 {
		t.Fatalf("rewind exited %d: %s", code, errOut)
	}
	run("turn four")
	if out, errOut, code := runCLI(t, append([]string{"compact"}, append(common, "o")...)...); code != 0 {
		t.Fatalf("compact exited %d: %s %s", code, out, errOut)
	}
	run("turn five")

	md, errOut, code := runCLI(t, "export", "--data", data, "o", "--format", "md")
	if code != 0 {
		t.Fatalf("export exited %d: %s", code, errOut)
	}
	inOrder(t, "markdown", md,
		"turn one", "answer to turn one", "turn two", "answer to turn two",
		"turn three", "(replaced by rewind to turn 3)", "answer to turn three", "rewind to turn 3:",
		"turn four", "answer to turn four", "compaction", "turn five", "answer to turn five")
	html, _, code := runCLI(t, "export", "--data", data, "o", "--format", "html")
	if code != 0 {
		t.Fatal("html export failed")
	}
	inOrder(t, "html", html, "turn one", "answer to turn one", "turn two", "turn three", "rewind to turn 3:", "turn four", "turn five")
	if c := strings.Count(md, "### You"); c != 5 {
		t.Errorf("the markdown has %d prompts, want 5", c)
	}
}
