package todo

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/tally-dev/tally/engine/tool"
)

var (
	//go:embed checklist_list.md
	checklistListDoc string
	//go:embed todo_list.md
	todoListDoc string
)

var listSchema = compact(`{"type": "object", "properties": {}, "additionalProperties": false}`)

// listTool shows the checklist without changing it.
type listTool struct {
	name, doc string
	list      *List
}

func (t listTool) Spec() tool.Spec {
	return tool.Spec{Name: t.name, Description: strings.TrimSpace(t.doc), Parameters: listSchema}
}

func (listTool) NeedsApproval() bool { return false }

func (t listTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p struct{}
	if err := decodeArgs(args, &p, ""); err != nil {
		return fail(t.list, t.name, err)
	}
	return ok(t.list, nil)
}
