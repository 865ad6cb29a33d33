package todo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/tool"
)

func run(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	return tl.Run(context.Background(), nil, json.RawMessage(args))
}

func byName(l *List) map[string]tool.Tool {
	m := map[string]tool.Tool{}
	for _, tl := range Tools(l) {
		m[tl.Spec().Name] = tl
	}
	for alias, target := range Aliases {
		m[alias] = m[target] // what the registry's Lookup gives for it
	}
	return m
}

func TestToolSpecs(t *testing.T) {
	names := []string{"checklist_write", "checklist_add", "checklist_update", "checklist_list"}
	tools := Tools(New())
	if len(tools) != len(names) {
		t.Fatalf("%d tools, want %d", len(tools), len(names))
	}
	for i, tl := range tools {
		s := tl.Spec()
		if s.Name != names[i] {
			t.Errorf("tool %d is %s, want %s", i, s.Name, names[i])
		}
		if tl.NeedsApproval() {
			t.Errorf("%s needs approval", s.Name)
		}
		if s.Description == "" || strings.TrimSpace(s.Description) != s.Description {
			t.Errorf("%s has description %q", s.Name, s.Description)
		}
		var schema map[string]any
		if err := json.Unmarshal(s.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s parameters %s are not an object schema", s.Name, s.Parameters)
		}
	}
	// Every alias names one of the tools, by the other agents' name for it.
	for alias, target := range Aliases {
		if !strings.HasPrefix(alias, "todo_") || strings.TrimPrefix(alias, "todo_") != strings.TrimPrefix(target, "checklist_") {
			t.Errorf("alias %s → %s", alias, target)
		}
	}
}

func TestToolCalls(t *testing.T) {
	seed := `{"items":[{"content":"Read the code","status":"completed"},{"content":"Fix the bug","status":"in_progress"},{"content":"Run the tests"}]}`
	cases := []struct {
		name    string
		tool    string
		args    string
		wantErr bool
		want    []string // substrings of Content
		state   string   // statuses after the call
	}{
		{"write replaces the list", "checklist_write", `{"items":[{"content":"x"}]}`, false,
			[]string{"checklist: 1 item, 0 done (0%), nothing in progress\n\n{\"items\":[{\"id\":\"1\",\"content\":\"x\",\"status\":\"pending\"}]"}, "1:pending"},
		{"write with two in progress says which was demoted", "checklist_write",
			`{"items":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`, false,
			[]string{`in progress: #2 "b"`, `note: item #1 "a" was moved back to pending because only one item can be in progress and #2 is now in progress.`}, "1:pending 2:in_progress"},
		{"write with an empty list clears it", "todo_write", `{"items":[]}`, false,
			[]string{"checklist: 0 items"}, ""},
		{"write without items", "checklist_write", `{}`, true,
			[]string{`checklist_write: parameter "items" is missing`}, "1:completed 2:in_progress 3:pending"},
		{"write with an unknown item field", "checklist_write", `{"items":[{"content":"a","priority":1}]}`, true,
			[]string{`unknown parameter "priority"`}, "1:completed 2:in_progress 3:pending"},
		{"write with a bad status", "checklist_write", `{"items":[{"content":"a","status":"done"}]}`, true,
			[]string{`invalid status "done" for item "a"; use pending, in_progress or completed`}, "1:completed 2:in_progress 3:pending"},
		{"add in progress demotes the current item", "checklist_add", `{"content":"Write docs","status":"in_progress"}`, false,
			[]string{`in progress: #4 "Write docs"`, `note: item #2 "Fix the bug" was moved back to pending`}, "1:completed 2:pending 3:pending 4:in_progress"},
		{"add defaults to pending", "todo_add", `{"content":"Write docs"}`, false,
			[]string{`"id":"4","content":"Write docs","status":"pending"`}, "1:completed 2:in_progress 3:pending 4:pending"},
		{"add with empty content", "checklist_add", `{"content":""}`, true,
			[]string{"checklist_add: content is empty"}, "1:completed 2:in_progress 3:pending"},
		{"update to in progress demotes the current item", "checklist_update", `{"id":"3","status":"in_progress"}`, false,
			[]string{`in progress: #3 "Run the tests"`, `note: item #2`}, "1:completed 2:pending 3:in_progress"},
		{"update accepts a numeric id", "todo_update", `{"id":2,"status":"completed"}`, false,
			[]string{"2 done (66%)"}, "1:completed 2:completed 3:pending"},
		{"update of an unknown id lists the valid ids", "checklist_update", `{"id":"7","status":"completed"}`, true,
			[]string{`checklist_update: no item has id "7"; valid ids are 1, 2, 3`}, "1:completed 2:in_progress 3:pending"},
		{"update with nothing to change", "checklist_update", `{"id":"2"}`, true,
			[]string{`nothing to change for item "2"`}, "1:completed 2:in_progress 3:pending"},
		{"update with an id of the wrong type", "checklist_update", `{"id":true,"status":"completed"}`, true,
			[]string{`parameter "id" must be a string`}, "1:completed 2:in_progress 3:pending"},
		{"update with an unknown field", "checklist_update", `{"id":"2","state":"completed"}`, true,
			[]string{`unknown parameter "state"`}, "1:completed 2:in_progress 3:pending"},
		{"list with no arguments", "checklist_list", ``, false,
			[]string{`checklist: 3 items, 1 done (33%), in progress: #2 "Fix the bug"`}, "1:completed 2:in_progress 3:pending"},
		{"list with an unknown field", "todo_list", `{"all":true}`, true,
			[]string{`unknown parameter "all"`}, "1:completed 2:in_progress 3:pending"},
		{"malformed JSON", "checklist_add", `{"content":`, true,
			[]string{"arguments are not valid JSON"}, "1:completed 2:in_progress 3:pending"},
		{"arguments that are not an object", "checklist_add", `["a"]`, true,
			[]string{"arguments must be a JSON object"}, "1:completed 2:in_progress 3:pending"},
		{"trailing text after the object", "checklist_add", `{"content":"a"} x`, true,
			[]string{"extra text after the JSON object"}, "1:completed 2:in_progress 3:pending"},
		{"wrong type for a parameter", "checklist_add", `{"content":5}`, true,
			[]string{`parameter "content" must be a string`}, "1:completed 2:in_progress 3:pending"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			tools := byName(l)
			if r := run(t, tools["checklist_write"], seed); r.IsError {
				t.Fatal(r.Content)
			}
			r := run(t, tools[tc.tool], tc.args)
			if r.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, content:\n%s", r.IsError, r.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Content, w) {
					t.Errorf("content lacks %q:\n%s", w, r.Content)
				}
			}
			// Every result, failed or not, carries the current snapshot.
			if !strings.Contains(r.Content, l.Snapshot().String()) {
				t.Errorf("content lacks the current snapshot:\n%s", r.Content)
			}
			if !tc.wantErr && !strings.HasPrefix(r.Content, l.Snapshot().String()) {
				t.Errorf("successful content does not start with the snapshot:\n%s", r.Content)
			}
			if got := statuses(l.Items()); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
			if r.Wrote || len(r.Paths) != 0 {
				t.Errorf("result reports file activity: %+v", r)
			}
		})
	}
}

func TestAllToolsShareOneList(t *testing.T) {
	l := New()
	tools := byName(l)
	steps := []struct{ tool, args string }{
		{"todo_write", `{"items":[{"content":"a"}]}`},
		{"checklist_add", `{"content":"b"}`},
		{"todo_add", `{"content":"c","status":"in_progress"}`},
		{"checklist_update", `{"id":"1","status":"completed"}`},
		{"todo_update", `{"id":"2","status":"in_progress"}`},
	}
	for _, s := range steps {
		if r := run(t, tools[s.tool], s.args); r.IsError {
			t.Fatalf("%s: %s", s.tool, r.Content)
		}
	}
	want := "1:completed 2:in_progress 3:pending"
	if got := statuses(l.Items()); got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	a, b := run(t, tools["checklist_list"], `{}`), run(t, tools["todo_list"], `{}`)
	if a.Content != b.Content || !strings.HasPrefix(a.Content, l.Snapshot().String()) {
		t.Errorf("list tools disagree:\n%s\n%s", a.Content, b.Content)
	}
	if l.Version() != len(steps) {
		t.Errorf("version %d, want %d", l.Version(), len(steps))
	}
}
