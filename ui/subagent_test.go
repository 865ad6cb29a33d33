package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
)

// delegating is a scripted model that hands two jobs to sub-agents and
// answers once their reports are in; each child reads one file and reports.
func delegating() llmtest.ScriptFunc {
	task := func(desc, prompt string) llmtest.ToolCall {
		b, _ := json.Marshal(map[string]string{"description": desc, "prompt": prompt})
		return llmtest.ToolCall{Name: "task", Arguments: string(b)}
	}
	return func(r *llmtest.Req) llmtest.Reply {
		results := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				results++
			}
		}
		if strings.HasPrefix(r.Messages[0].Content, "# Sub-agent:") {
			if results > 0 {
				return llmtest.Text("Report: the workspace holds calc.go.")
			}
			return llmtest.Call("list_dir", `{"path":"."}`)
		}
		if results == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{task("find the calc package", "job A"), task("count the files", "job B")}}
		}
		return llmtest.Text("Both sub-agents reported.")
	}
}

// A task call's card holds the sub-agent's nested card: its step count and
// state, and its transcript one click away.
func TestSubagentCardShowsTheChildAndItsTranscript(t *testing.T) {
	srv := llmtest.New(delegating())
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("delegate")
	h.waitIdle()
	var cards []*chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemTool && it.Call.Name == "task" {
			cards = append(cards, it)
		}
	}
	if len(cards) != 2 {
		t.Fatalf("%d task cards, want 2", len(cards))
	}
	for _, it := range cards {
		if it.Child == nil || !strings.Contains(chat.ChildText(it.Child), "· done · step 2 of") {
			t.Fatalf("card %q has child %+v", it.Title, it.Child)
		}
		if !strings.HasPrefix(it.Title, "Sub-agent: ") {
			t.Errorf("title %q", it.Title)
		}
	}
	c := h.card(cards[0])
	if c == nil || !c.Child.Box.Visible() || c.Child.Stop.Visible() {
		t.Fatal("the nested card is not shown, or a finished child still offers Stop")
	}
	test.Tap(c.Child.Transcript)
	h.waitFor("the transcript", func() bool { return h.overlayShows("Report: the workspace holds calc.go.") })
	if !h.overlayShows("list_dir") {
		t.Error("the transcript does not show the child's tool calls")
	}
	for _, role := range []string{"── Task from the main agent ──\n", "── Sub-agent ──\n", "── Tool result · list_dir ──\n"} {
		if !h.overlayShows(role) {
			t.Errorf("the transcript has no role line %q", role)
		}
	}

	// Reopened, the cards still show their children.
	h.ui.Close()
	h2 := reopen(t, h)
	h2.waitFor("the session", func() bool { return h2.ui.live != nil && h2.ui.live.sess != nil })
	n := 0
	for _, it := range h2.ui.chat.Items {
		if it.Child != nil {
			n++
		}
	}
	if n != 2 {
		t.Errorf("after a relaunch %d cards show their sub-agent, want 2", n)
	}
}

// Two sub-agents that ask for approval at the same time both get a card,
// and both answers reach them.
func TestTwoSubagentsAskAtOnce(t *testing.T) {
	task := func(desc, file string) llmtest.ToolCall {
		b, _ := json.Marshal(map[string]string{"description": desc, "prompt": "write " + file, "kind": "general"})
		return llmtest.ToolCall{Name: "task", Arguments: string(b)}
	}
	srv := llmtest.New(llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		results := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				results++
			}
		}
		if strings.HasPrefix(r.Messages[0].Content, "# Sub-agent:") {
			if results > 0 {
				return llmtest.Text("Report: written.")
			}
			file := "a.txt"
			if strings.Contains(r.Messages[1].Content, "b.txt") {
				file = "b.txt"
			}
			return llmtest.Call("write_file", `{"path":"`+file+`","content":"x"}`)
		}
		if results == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{task("write a", "a.txt"), task("write b", "b.txt")}}
		}
		return llmtest.Text("done")
	}))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("delegate two writes")
	h.waitFor("two approvals", func() bool { return len(h.ui.live.waits.approvals) == 2 })
	if h.ui.badgeOf(h.ui.live.id) != badgeWaiting {
		t.Error("the session is not badged as waiting")
	}
	for range 2 {
		h.ui.decideWaiting(true)
	}
	h.waitIdle()
	if len(h.ui.live.waits.approvals) != 0 {
		t.Errorf("%d approvals left", len(h.ui.live.waits.approvals))
	}
}
