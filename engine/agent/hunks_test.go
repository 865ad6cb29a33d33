package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// partialApprover accepts the hunks in accept of every change it reviews.
type partialApprover struct {
	accept []bool
	diffs  []string
}

func (p *partialApprover) Approve(context.Context, tool.ApprovalRequest) (tool.Decision, error) {
	return tool.Approve, nil
}

func (p *partialApprover) ApproveHunks(_ context.Context, req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	p.diffs = append(p.diffs, req.Diff.Unified())
	return tool.Approve, p.accept, nil
}

func TestSessionWritesOnlyTheAcceptedHunks(t *testing.T) {
	var before, after strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&before, "line %d\n", i)
		if i == 5 || i == 20 || i == 35 {
			fmt.Fprintf(&after, "LINE %d\n", i)
		} else {
			fmt.Fprintf(&after, "line %d\n", i)
		}
	}
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("Done.")
		}
		return llmtest.Call("write_file", fmt.Sprintf(`{"path":"f.txt","content":%q}`, after.String()))
	})
	ap := &partialApprover{accept: []bool{true, false, true}}
	h := newHarness(t, script, ap)
	os.WriteFile(filepath.Join(h.ws, "f.txt"), []byte(before.String()), 0o644)
	s := h.session("hunks")
	if _, err := s.Run(context.Background(), "capitalise three lines"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	if len(ap.diffs) != 1 || !strings.Contains(ap.diffs[0], "+LINE 20") {
		t.Fatalf("the approver saw %q", ap.diffs)
	}
	want := strings.Replace(strings.Replace(before.String(), "line 5\n", "LINE 5\n", 1), "line 35\n", "LINE 35\n", 1)
	if b, _ := os.ReadFile(filepath.Join(h.ws, "f.txt")); string(b) != want {
		t.Errorf("the file holds\n%s", b)
	}
	msgs := s.Snapshot().Messages()
	result := msgs[2].Text()
	if !strings.Contains(result, "hunk 2 of 3 (@@ -17,7 +17,7 @@) was not applied") {
		t.Errorf("the tool result does not name the rejected hunk: %q", result)
	}
	// The partial write is recorded like any other: undoing the turn
	// brings the original back.
	if _, err := s.Rewind().Apply(context.Background(), 1, true, false, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "f.txt")); string(b) != before.String() {
		t.Errorf("after the rewind the file holds\n%s", b)
	}
}
