package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Every session made without a title was listed under its folder's name,
// so a list of runs in one folder showed identical rows. The first prompt
// now names such a session; a title the user gave is kept.
func TestFirstPromptNamesAnUntitledSession(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("a"), llmtest.Text("b"), llmtest.Text("c")), nil)
	ctx := context.Background()
	s := h.session("untitled")
	prompt := "Fix the flaky test in calc_test.go\nand explain why it failed, in detail, with every step you took along the way"
	if _, err := s.Run(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	got, err := h.st.Session("untitled")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Title, "Fix the flaky test in calc_test.go and explain") || len([]rune(got.Title)) > titleLimit+1 {
		t.Fatalf("title = %q, want the first prompt on one line, clipped", got.Title)
	}
	if _, err := s.Run(ctx, "second prompt"); err != nil {
		t.Fatal(err)
	}
	if again, _ := h.st.Session("untitled"); again.Title != got.Title {
		t.Fatalf("the second prompt renamed the session to %q", again.Title)
	}

	named, err := Create(h.cfg, "named", h.ws, "My refactor")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := named.Run(ctx, "do it"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.st.Session("named"); m.Title != "My refactor" {
		t.Fatalf("a chosen title became %q", m.Title)
	}
}
