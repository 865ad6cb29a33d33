package todo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/tool"
)

// Tools returns the four checklist tools, all working on l:
// checklist_write, checklist_add, checklist_update and checklist_list. None
// of them needs approval.
//
// Every result's Content is the list's [Snapshot] in its String form (the
// summary line, a blank line, the JSON), followed by notes about items moved
// back to pending. A failed call leaves the list unchanged and returns a
// one-sentence error naming the bad value, then the current snapshot, so
// the model can correct itself without another call.
func Tools(l *List) []tool.Tool {
	return []tool.Tool{
		writeTool{base{"checklist_write", checklistWriteDoc, writeSchema, l}},
		addTool{base{"checklist_add", checklistAddDoc, addSchema, l}},
		updateTool{base{"checklist_update", checklistUpdateDoc, updateSchema, l}},
		listTool{base{"checklist_list", checklistListDoc, listSchema, l}},
	}
}

// Aliases are the names other agents give the checklist tools, which
// models trained on them call: each runs the checklist tool it names,
// with the same parameters. They are accepted but not in the catalogue,
// so their schemas cost no prefix (see tool.Registry.Alias).
var Aliases = map[string]string{
	"todo_write":  "checklist_write",
	"todo_add":    "checklist_add",
	"todo_update": "checklist_update",
	"todo_list":   "checklist_list",
}

// compact compacts a JSON Schema literal written in the source. It panics on
// invalid JSON, which is a programming error caught by the tests.
func compact(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("todo: invalid parameter schema: " + err.Error())
	}
	return json.RawMessage(b.Bytes())
}

// ok returns the snapshot of l followed by notes.
func ok(l *List, notes []string) tool.Result {
	content := l.Snapshot().String()
	if len(notes) > 0 {
		content += "\n\n" + strings.Join(notes, "\n")
	}
	return tool.Result{Content: content}
}

// fail returns an error result for tool name: the message, a blank line and
// the current snapshot of l.
func fail(l *List, name string, err error) tool.Result {
	return tool.Result{Content: name + ": " + err.Error() + "\n\n" + l.Snapshot().String(), IsError: true}
}

// decodeArgs decodes args with the strict decoder all tools share
// (tool.DecodeArgs), whose refusals list the accepted parameters.
func decodeArgs(args json.RawMessage, v any, _ string) error { return tool.DecodeArgs(args, v) }

// errMissing reports a missing required parameter.
func errMissing(name, what string) error {
	return fmt.Errorf("parameter %q is missing; %s", name, what)
}

// snippet quotes s shortened to 60 runes.
func snippet(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		return fmt.Sprintf("%q…", string(r[:60]))
	}
	return fmt.Sprintf("%q", s)
}

// base is what the eight checklist tools share: a name, a description, a
// parameter schema and the session's list. None needs approval.
type base struct {
	name, doc string
	schema    json.RawMessage
	list      *List
}

func (b base) Spec() tool.Spec {
	return tool.Spec{Name: b.name, Description: strings.TrimSpace(b.doc), Parameters: b.schema}
}

func (base) NeedsApproval() bool { return false }
