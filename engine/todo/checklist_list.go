package todo

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/tally-dev/tally/engine/tool"
)

var (
	//go:embed checklist_list.md
	checklistListDoc string
)

var listSchema = compact(`{"type": "object", "properties": {}, "additionalProperties": false}`)

// listTool shows the checklist without changing it.
type listTool struct{ base }

func (t listTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p struct{}
	if err := decodeArgs(args, &p, ""); err != nil {
		return fail(t.list, t.name, err)
	}
	return ok(t.list, nil)
}
