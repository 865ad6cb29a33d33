package todo

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"

	"github.com/tally-dev/tally/engine/tool"
)

var (
	//go:embed checklist_update.md
	checklistUpdateDoc string
)

const updateParamsHint = `"id", "status"?, "content"?`

var updateSchema = compact(`{
	"type": "object",
	"properties": {
		"id": {"type": "string", "description": "Id of the item to change, as shown in the checklist."},
		"status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "New status. Setting in_progress moves any other in-progress item back to pending."},
		"content": {"type": "string", "description": "New description of the item."}
	},
	"required": ["id"],
	"additionalProperties": false
}`)

// updateTool changes one item's status or content.
type updateTool struct{ base }

func (t updateTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p struct {
		ID      json.RawMessage `json:"id"`
		Status  Status          `json:"status"`
		Content string          `json:"content"`
	}
	if err := decodeArgs(args, &p, updateParamsHint); err != nil {
		return fail(t.list, t.name, err)
	}
	id, err := decodeID(p.ID)
	if err != nil {
		return fail(t.list, t.name, err)
	}
	_, notes, err := t.list.update(id, p.Status, p.Content)
	if err != nil {
		return fail(t.list, t.name, err)
	}
	return ok(t.list, notes)
}

// decodeID accepts an id given as a JSON string or, since the ids the list
// assigns look like numbers, as a JSON integer.
func decodeID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if _, ierr := n.Int64(); ierr == nil {
			return n.String(), nil
		}
	}
	return "", errors.New("parameter \"id\" must be a string such as \"3\", got " + snippet(string(raw)) + "; pass the id as shown in the checklist")
}
