package ui

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Tool cards used to show raw JSON in their titles and grep patterns with
// doubled backslashes (issue 12 #11): titles are human summaries, and the
// raw call stays one click away on the card.
func TestToolCardTitlesAreHumanSummaries(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("checklist_write", `{"items":[{"content":"read"},{"content":"fix"},{"content":"test"}]}`),
		llmtest.Call("grep", `{"pattern":"Add\\(","path":"."}`),
		llmtest.Text("done"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("go")
	h.waitIdle()
	for name, want := range map[string]string{"checklist_write": "Checklist: 3 items", "grep": `grep Add\( in .`} {
		it := h.toolItem(name)
		if it == nil {
			t.Fatalf("no %s card", name)
		}
		if it.Title != want {
			t.Errorf("%s card title %q, want %q", name, it.Title, want)
		}
		if strings.Contains(it.Title, "{") {
			t.Errorf("%s card title shows raw JSON: %q", name, it.Title)
		}
		if !strings.Contains(it.ArgsText, `"`) {
			t.Errorf("%s card lost the raw call: %q", name, it.ArgsText)
		}
	}
}
