package purge

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/transcript"
)

var at = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func sample() []transcript.Message {
	c1 := transcript.ToolCall{ID: "a", Name: "read_file", Arguments: `{"path":"x.go"}`}
	c2 := transcript.ToolCall{ID: "b", Name: "grep", Arguments: `{"pattern":"y"}`}
	return []transcript.Message{
		transcript.UserText("<turn_meta>m</turn_meta>", "fix x.go", at),              // 1
		transcript.AssistantReply("", "", []transcript.ToolCall{c1, c2}, at),         // 2
		transcript.ToolResult(c1, strings.Repeat("long file body ", 200), false, at), // 3
		transcript.ToolResult(c2, "x.go:3: y", false, at),                            // 4
		transcript.AssistantReply("ok", "", nil, at),                                 // 5
		transcript.UserText("", "thanks, secret token sk-123 here", at),              // 6
	}
}

func TestApplyKeepsPairsAndUserText(t *testing.T) {
	cases := []struct {
		name    string
		ops     []Op
		removed []int
		reject  string
	}{
		{"removing a result removes its call and the sibling result", []Op{{Op: "remove", Msg: 3}}, []int{2, 3, 4}, ""},
		{"removing a call removes its results", []Op{{Op: "remove", Msg: 2}}, []int{2, 3, 4}, ""},
		{"plain removal", []Op{{Op: "remove", Msg: 5}}, []int{5}, ""},
		{"last user text survives", []Op{{Op: "remove", Msg: 1}, {Op: "remove", Msg: 6}}, []int{1}, "must remain"},
		{"out of range", []Op{{Op: "remove", Msg: 9}}, nil, "does not exist"},
		{"bad op", []Op{{Op: "explode", Msg: 1}}, nil, "unknown op"},
		{"bad pattern", []Op{{Op: "replace", Msg: 6, Pattern: "("}}, nil, "not a valid regular expression"},
		{"pattern that matches nothing", []Op{{Op: "replace", Msg: 6, Pattern: "zzz"}}, nil, "matched nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Apply(sample(), c.ops)
			var got []int
			for _, ch := range p.Changes {
				if ch.Action == "remove" {
					got = append(got, ch.Msg)
				}
			}
			if len(got) != len(c.removed) {
				t.Fatalf("removed %v; want %v", got, c.removed)
			}
			for i := range got {
				if got[i] != c.removed[i] {
					t.Fatalf("removed %v; want %v", got, c.removed)
				}
			}
			if c.reject != "" && !strings.Contains(strings.Join(p.Rejected, ";"), c.reject) {
				t.Errorf("rejections %v lack %q", p.Rejected, c.reject)
			}
			if err := transcript.CheckPairing(p.Messages); err != nil {
				t.Errorf("purged history is invalid: %v", err)
			}
			user := false
			for _, m := range p.Messages {
				user = user || m.IsPlainUserText()
			}
			if !user {
				t.Error("no plain user text survived")
			}
		})
	}
}

func TestReplace(t *testing.T) {
	p := Apply(sample(), []Op{{Op: "replace", Msg: 6, Pattern: `sk-\d+`, With: "<agent_status>[redacted]"}})
	got := p.Messages[5].Body()
	if !strings.Contains(got, "[redacted]") || strings.Contains(got, "sk-123") || strings.Contains(got, "<agent_status") {
		t.Errorf("replaced text = %q", got)
	}
	if len(p.Changes) != 1 || p.Changes[0].Action != "replace" {
		t.Errorf("changes = %+v", p.Changes)
	}
	if !strings.Contains(p.Text(), "shorten message 6") {
		t.Errorf("preview:\n%s", p.Text())
	}
}

func TestParseOpsAndRequest(t *testing.T) {
	ops, errs := ParseOps([]llm.ToolCall{
		{Name: ToolName, Arguments: `{"op":"remove","msg":3}`},
		{Name: "read_file", Arguments: `{}`},
		{Name: ToolName, Arguments: `{bad`},
	})
	if len(ops) != 1 || ops[0].Msg != 3 || len(errs) != 2 {
		t.Errorf("ops %v errs %v", ops, errs)
	}
	req := Request("m", "sys", sample())
	if len(req.Tools) != 1 || req.Tools[0].Name != ToolName || len(req.Messages) != 2 {
		t.Fatalf("request %+v", req)
	}
	body := req.Messages[1].Content
	if !strings.Contains(body, "Be conservative") || !strings.Contains(body, "3. tool read_file") || !strings.Contains(body, "[calls read_file") {
		t.Errorf("list:\n%s", body)
	}
}

// The purge's messages reach the app and the command line as they are:
// plain sentences, without the package's name first.
func TestPurgeMessagesArePlainSentences(t *testing.T) {
	_, errs := ParseOps([]llm.ToolCall{{Name: "read_file", Arguments: `{}`}, {Name: ToolName, Arguments: `{bad`}})
	errs = append(errs, ErrNothing)
	for _, err := range errs {
		if strings.HasPrefix(err.Error(), "purge:") {
			t.Errorf("%q opens with the package's name", err)
		}
	}
	if len(errs) != 3 || !strings.Contains(errs[0].Error(), `"read_file"`) {
		t.Errorf("errors %v; want one per bad call, naming it", errs)
	}
}
