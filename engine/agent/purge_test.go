package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/purge"
	"github.com/tally-dev/tally/engine/transcript"
)

func TestPurgePreviewAndApply(t *testing.T) {
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if len(req.Tools) == 1 && req.Tools[0] == purge.ToolName {
			if !strings.Contains(req.Messages[1].Content, "Be conservative") {
				t.Error("purge instruction missing")
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: purge.ToolName, Arguments: `{"op":"remove","msg":3}`},
				{Name: purge.ToolName, Arguments: `{"op":"replace","msg":5,"pattern":"alpha","with":"[gone]"}`},
			}}
		}
		if req.ToolResultsSinceHuman() < 2 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"a.txt","limit":` + string(rune('1'+req.ToolResultsSinceHuman())) + `}`}}}
		}
		return llmtest.Text("alpha is the first line")
	})
	h := newHarness(t, script, nil)
	s := h.session("purge")
	if _, err := s.Run(context.Background(), "read a.txt twice"); err != nil {
		t.Fatal(err)
	}
	before := len(s.Snapshot().Messages())
	p, err := s.Purge().Preview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Snapshot().Messages()) != before {
		t.Fatal("the preview changed the history")
	}
	if !strings.Contains(p.Text(), "remove  message 2") || !strings.Contains(p.Text(), "remove  message 3") {
		t.Errorf("preview:\n%s", p.Text())
	}
	if err := s.Purge().Apply(p); err != nil {
		t.Fatal(err)
	}
	msgs := s.Snapshot().Messages()
	if len(msgs) != before-2 {
		t.Errorf("%d messages after purge; want %d", len(msgs), before-2)
	}
	if err := transcript.CheckPairing(msgs); err != nil {
		t.Error(err)
	}
	if err := s.Purge().Apply(p); err == nil {
		t.Error("a stale preview was applied twice")
	}
	recs, _ := h.st.Records("rebuild", "purge")
	if len(recs) != 1 || !strings.Contains(string(recs[0].Data), `"reason":"purge"`) {
		t.Errorf("rebuild records = %d", len(recs))
	}
	if _, err := s.Run(context.Background(), "continue"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
}
