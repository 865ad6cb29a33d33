package chat

import (
	"testing"

	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/transcript"
)

// After a rewind the model's next calls may reuse the IDs of the calls it
// took out: a stored child goes on its task card, never on another tool's
// card that has the same ID.
func TestChildGoesOnlyOnATaskCard(t *testing.T) {
	read := &Item{Call: transcript.ToolCall{ID: "call_0_0", Name: "read_file"}}
	task := &Item{Call: transcript.ToolCall{ID: "call_1_0", Name: subagent.TaskToolName}}
	c := &View{ByCall: map[string]*Item{"call_0_0": read, "call_1_0": task}}
	c.AttachChildren([]subagent.Info{{ID: "sub-1", CallID: "call_0_0"}, {ID: "sub-2", CallID: "call_1_0"}})
	if read.Child != nil {
		t.Errorf("the rewound child %s went on a read_file card", read.Child.ID)
	}
	if task.Child == nil || task.Child.ID != "sub-2" {
		t.Errorf("the task card's child is %+v", task.Child)
	}
}
