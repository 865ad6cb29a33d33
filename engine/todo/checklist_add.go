package todo

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/tally-dev/tally/engine/tool"
)

var (
	//go:embed checklist_add.md
	checklistAddDoc string
)

const addParamsHint = `"content", "status"?`

var addSchema = compact(`{
	"type": "object",
	"properties": {
		"content": {"type": "string", "description": "What the new step is, in a few words."},
		"status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Default pending. Setting in_progress moves any other in-progress item back to pending."}
	},
	"required": ["content"],
	"additionalProperties": false
}`)

// addTool appends one item to the checklist.
type addTool struct{ base }

func (t addTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p struct {
		Content string `json:"content"`
		Status  Status `json:"status"`
	}
	if err := decodeArgs(args, &p, addParamsHint); err != nil {
		return fail(t.list, t.name, err)
	}
	_, notes, err := t.list.add(p.Content, p.Status)
	if err != nil {
		return fail(t.list, t.name, err)
	}
	return ok(t.list, notes)
}
