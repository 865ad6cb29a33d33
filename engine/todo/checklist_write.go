package todo

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/tally-dev/tally/engine/tool"
)

var (
	//go:embed checklist_write.md
	checklistWriteDoc string
)

const writeParamsHint = `"items": [{"id"?, "content", "status"?}, ...]`

var writeSchema = compact(`{
	"type": "object",
	"properties": {
		"items": {
			"type": "array",
			"description": "The complete checklist, in order. It replaces the existing list.",
			"items": {
				"type": "object",
				"properties": {
					"id": {"type": "string", "description": "Optional id; items without one are numbered 1, 2, 3, ..."},
					"content": {"type": "string", "description": "What the step is, in a few words."},
					"status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Default pending. At most one item may be in_progress."}
				},
				"required": ["content"],
				"additionalProperties": false
			}
		}
	},
	"required": ["items"],
	"additionalProperties": false
}`)

// writeTool replaces the whole checklist.
type writeTool struct{ base }

func (t writeTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p struct {
		Items []Item `json:"items"`
	}
	if err := decodeArgs(args, &p, writeParamsHint); err != nil {
		return fail(t.list, t.name, err)
	}
	if p.Items == nil {
		return fail(t.list, t.name, errMissing("items", "pass the complete list as items, or [] to clear it"))
	}
	notes, err := t.list.write(p.Items)
	if err != nil {
		return fail(t.list, t.name, err)
	}
	return ok(t.list, notes)
}
