package skill

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/transcript"
)

// TestToolNamesTheSkillsAsAnEnumFixedAtTheStart: the name parameter is an
// enum of the skills of the system prompt, and the spec's bytes stay the
// same when a skill is added while the session lives.
func TestToolNamesTheSkillsAsAnEnumFixedAtTheStart(t *testing.T) {
	user := t.TempDir()
	write(t, user, "skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nUse pdftk.\n")
	write(t, user, "skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the site.\n---\nRun make deploy.\n")
	k := NewSession(Discover(user, "", "").Names(), func() Catalog { return Discover(user, "", "") })
	tl := k.Tool(nil)
	before, _ := json.Marshal(tl.Spec())
	var params struct {
		Properties struct {
			Name struct {
				Enum []string `json:"enum"`
			} `json:"name"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tl.Spec().Parameters, &params); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(params.Properties.Name.Enum, ","); got != "deploy,pdf" {
		t.Fatalf("the enum is %q, want deploy,pdf", got)
	}
	write(t, user, "skills/zeta/SKILL.md", "---\nname: zeta\ndescription: Added later.\n---\nz\n")
	k.Refresh()
	if after, _ := json.Marshal(tl.Spec()); string(after) != string(before) {
		t.Fatalf("the spec changed within the session:\n%s\n%s", before, after)
	}
	if after, _ := json.Marshal(k.Tool(nil).Spec()); string(after) != string(before) {
		t.Fatalf("a second tool of the session has another spec:\n%s\n%s", before, after)
	}
}

// TestSecondActivationPointsAtTheFirst: a skill whose instructions are in
// the conversation is not loaded again; the answer names the earlier
// call. A failed or cleared first result, or a file read, does not count.
func TestSecondActivationPointsAtTheFirst(t *testing.T) {
	user := t.TempDir()
	write(t, user, "skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nUse pdftk to fill forms.\n")
	write(t, user, "skills/pdf/reference.md", "pdftk reference")
	k := NewSession([]string{"pdf"}, func() Catalog { return Discover(user, "", "") })
	var history []transcript.Message
	tl := k.Tool(func() []transcript.Message { return history })
	call := func(id, args string) string {
		res := tl.Run(context.Background(), nil, json.RawMessage(args))
		history = append(history,
			transcript.Message{Role: transcript.Assistant, ToolCalls: []transcript.ToolCall{{ID: id, Name: ToolName, Arguments: args}}},
			transcript.Message{Role: transcript.Tool, ToolCallID: id, ToolName: ToolName, IsError: res.IsError, Blocks: []transcript.Block{{Type: transcript.BlockText, Text: res.Content}}})
		return res.Content
	}
	if got := call("call_1", `{"name":"pdf","file":"reference.md"}`); got != "pdftk reference" {
		t.Fatalf("the file read: %q", got)
	}
	first := call("call_2", `{"name":"pdf"}`)
	if !strings.Contains(first, "Use pdftk to fill forms.") {
		t.Fatalf("the first activation: %q", first)
	}
	second := call("call_3", `{"name":"pdf"}`)
	if strings.Contains(second, "Use pdftk") || !strings.Contains(second, "already active") || !strings.Contains(second, "call_2") {
		t.Fatalf("the second activation: %q", second)
	}
	if acts := Activations(history); len(acts) != 2 || !acts[3] || !acts[5] {
		t.Errorf("activations %v, want the results at 3 and 5", acts)
	}
	// The instructions gone (a cleared result): the skill loads again.
	history[3].Blocks[0].Text = "[cleared]"
	if got := call("call_4", `{"name":"pdf"}`); !strings.Contains(got, "Use pdftk to fill forms.") {
		t.Fatalf("after the first result was cleared: %q", got)
	}
}
