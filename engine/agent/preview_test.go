package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// A server whose usage leaves out the tool schemas bills less than our
// own count of the same request. A compaction's preview, told in the
// server's units, promised 5,603 tokens; the result, counted in ours once
// the rewrite dropped the anchor, said 8.0k: the context seemed to grow.
// The level after a rewrite now stays in the server's units, so the
// result is what the preview promised.
func TestCompactionResultIsWhatThePreviewPromised(t *testing.T) {
	const schemaTokens = 1500 // what the server leaves out of every count
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		var r llmtest.Reply
		switch k := req.ToolResultsSinceHuman(); {
		case isSummaryRequest(req):
			r = llmtest.Text("The user asked to read the files; they were read.")
		case k < 6:
			r = llmtest.Call("read_file", fmt.Sprintf(`{"path":"g%d.txt"}`, k))
		default:
			r = llmtest.Text("read them all")
		}
		r.PromptTokens = max(req.PromptTokens-schemaTokens, 1)
		return r
	})
	sw := newSmallWindow(t, 200_000, script)
	s := sw.session("preview")
	if _, err := s.Run(context.Background(), "read the big files"); err != nil {
		t.Fatal(err)
	}
	plan, err := s.Compaction().Preview()
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Compaction().Apply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || plan.TokensAfter >= plan.TokensBefore {
		t.Fatalf("nothing to compare: applied %v, preview %d → %d", res.Applied, plan.TokensBefore, plan.TokensAfter)
	}
	level := s.Snapshot().Level
	if diff := level - plan.TokensAfter; diff > plan.TokensAfter/50 || -diff > plan.TokensAfter/50 {
		t.Fatalf("the preview promised %d tokens after compaction; the level is %d (before: %d)", plan.TokensAfter, level, plan.TokensBefore)
	}
	if res.TokensAfter != level {
		t.Fatalf("the result says %d tokens, the level %d", res.TokensAfter, level)
	}
}
