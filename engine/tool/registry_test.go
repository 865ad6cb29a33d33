package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeTool is a configurable Tool for registry tests.
type fakeTool struct {
	name    string
	desc    string
	gated   bool
	run     func(args json.RawMessage) Result
	gotArgs *json.RawMessage
}

func (f fakeTool) Spec() Spec {
	desc := f.desc
	if desc == "" {
		desc = "fake " + f.name
	}
	return Spec{Name: f.name, Description: desc, Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (f fakeTool) NeedsApproval() bool { return f.gated }
func (f fakeTool) Run(_ context.Context, _ *Env, args json.RawMessage) Result {
	if f.gotArgs != nil {
		*f.gotArgs = append(json.RawMessage(nil), args...)
	}
	if f.run != nil {
		return f.run(args)
	}
	return Result{Content: "ok " + f.name}
}

func catalogNames(r *Registry) []string {
	var names []string
	for _, s := range r.Catalog() {
		names = append(names, s.Name)
	}
	return names
}

func catalogJSON(t *testing.T, specs []Spec) [][]byte {
	t.Helper()
	out := make([][]byte, len(specs))
	for i, s := range specs {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func TestCatalogOrder(t *testing.T) {
	r := NewRegistry()
	for _, b := range slices.Backward(Builtins()) { // registration order must not matter
		r.AddBuiltin(b)
	}
	r.AddExtra(fakeTool{name: "zeta_extra"})
	r.AddExtra(fakeTool{name: "alpha_extra"})
	r.Activate(fakeTool{name: "zz_late"})
	r.Activate(fakeTool{name: "aa_late"})

	want := []string{"edit_file", "grep", "list_dir", "read_file", "run_shell", "web_fetch", "write_file",
		"alpha_extra", "zeta_extra", "zz_late", "aa_late"}
	if got := catalogNames(r); !slices.Equal(got, want) {
		t.Fatalf("catalog order\n got %v\nwant %v", got, want)
	}

	t.Run("adding an extra keeps the bytes of the entries before it", func(t *testing.T) {
		before := catalogJSON(t, r.Catalog())
		r.AddExtra(fakeTool{name: "beta_extra"})
		after := catalogJSON(t, r.Catalog())
		// beta_extra lands after alpha_extra: right after the built-ins
		// and alpha_extra.
		at := len(Builtins()) + 1
		for i := range at {
			if !bytes.Equal(before[i], after[i]) {
				t.Errorf("entry %d changed:\n%s\n%s", i, before[i], after[i])
			}
		}
		if got := catalogNames(r)[at]; got != "beta_extra" {
			t.Errorf("entry %d = %q, want beta_extra", at, got)
		}
	})
	t.Run("activating keeps every earlier byte", func(t *testing.T) {
		before := catalogJSON(t, r.Catalog())
		r.Activate(fakeTool{name: "a_first_by_name_but_last"})
		after := catalogJSON(t, r.Catalog())
		if len(after) != len(before)+1 {
			t.Fatalf("catalog has %d entries, want %d", len(after), len(before)+1)
		}
		if !bytes.Equal(bytes.Join(before, nil), bytes.Join(after[:len(before)], nil)) {
			t.Error("earlier entries changed")
		}
		if names := catalogNames(r); names[len(names)-1] != "a_first_by_name_but_last" {
			t.Errorf("activated tool not last: %v", names)
		}
	})
	t.Run("catalog bytes are stable across calls", func(t *testing.T) {
		a, _ := json.Marshal(r.Catalog())
		b, _ := json.Marshal(r.Catalog())
		if !bytes.Equal(a, b) {
			t.Error("two Catalog calls differ")
		}
	})
	t.Run("catalog is a copy", func(t *testing.T) {
		c := r.Catalog()
		c[0].Parameters[0] = 'X'
		c[0].Name = "mutated"
		if r.Catalog()[0].Name != "edit_file" || r.Catalog()[0].Parameters[0] != '{' {
			t.Error("mutating the returned catalog changed the registry")
		}
	})
	t.Run("duplicate name replaces in place", func(t *testing.T) {
		before := catalogNames(r)
		r.AddExtra(fakeTool{name: "zeta_extra", desc: "replacement"})
		r.Activate(fakeTool{name: "grep", desc: "replacement grep"})
		if got := catalogNames(r); !slices.Equal(got, before) {
			t.Fatalf("order changed\n got %v\nwant %v", got, before)
		}
		if tool, _ := r.Lookup("grep"); tool.Spec().Description != "replacement grep" {
			t.Error("Lookup does not return the replacement")
		}
		if c := r.Catalog(); c[1].Description != "replacement grep" {
			t.Errorf("catalog entry not replaced: %q", c[1].Description)
		}
	})
	t.Run("remove", func(t *testing.T) {
		r.Remove("zz_late")
		r.Remove("no_such_tool")
		if _, ok := r.Lookup("zz_late"); ok {
			t.Error("removed tool still found")
		}
		if slices.Contains(catalogNames(r), "zz_late") {
			t.Error("removed tool still in catalog")
		}
		r.Activate(fakeTool{name: "zz_late"})
		if names := catalogNames(r); names[len(names)-1] != "zz_late" {
			t.Errorf("re-activated tool not last: %v", names)
		}
	})
}

func TestZeroRegistry(t *testing.T) {
	var r Registry
	r.AddBuiltin(ReadFile())
	r.Remove("nothing")
	if names := r.Names(); len(names) != 1 || names[0] != "read_file" {
		t.Errorf("names = %v", names)
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	_, env := newWorkspace(t, map[string]string{"a.txt": "x\n"})
	r := NewRegistry()
	for _, b := range Builtins() {
		r.AddBuiltin(b)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("tmp_%d", i)
			r.Activate(fakeTool{name: name})
			r.Run(context.Background(), env, "read_file", `{"path":"a.txt"}`)
			r.Run(context.Background(), env, name, "")
			r.Catalog()
			r.Remove(name)
		})
	}
	wg.Wait()
	if n := len(r.Catalog()); n != len(Builtins()) {
		t.Errorf("catalog has %d entries after the temporary tools were removed", n)
	}
}

func TestRegistryRun(t *testing.T) {
	_, env := newWorkspace(t, map[string]string{"a.txt": "hello\n"})
	var got json.RawMessage
	r := NewRegistry()
	for _, b := range Builtins() {
		r.AddBuiltin(b)
	}
	r.AddExtra(fakeTool{name: "echo", gotArgs: &got})
	r.AddExtra(fakeTool{name: "boom", run: func(json.RawMessage) Result { panic("kaboom") }})
	r.AddExtra(fakeTool{name: "nilmap", run: func(json.RawMessage) Result {
		var m map[string]int
		//lint:ignore SA5000 the tool must panic at run time to test the recovery
		m["x"] = 1
		return Result{}
	}})
	r.AddExtra(fakeTool{name: "huge", run: func(json.RawMessage) Result {
		return Result{Content: strings.Repeat("z", 50000)}
	}})

	cases := []struct {
		name, tool, args string
		wantErr          bool
		want             []string
	}{
		{"unknown tool lists the available ones", "read_files", `{}`, true,
			[]string{`unknown tool "read_files"`, "edit_file, grep, list_dir, read_file, run_shell, web_fetch, write_file, boom, echo, huge, nilmap"}},
		{"malformed JSON", "read_file", `{"path": "a.txt"`, true,
			[]string{"read_file: arguments are not valid JSON", "unexpected", "valid JSON object"}},
		{"unquoted keys", "read_file", `{path: "a.txt"}`, true,
			[]string{"invalid character 'p'", `{path: \"a.txt\"}`}},
		{"array instead of object", "read_file", `["a.txt"]`, true, []string{"array, not an object"}},
		{"trailing garbage", "read_file", `{"path":"a.txt"} x`, true, []string{"extra text"}},
		{"empty args mean {}", "list_dir", ``, false, []string{"a.txt (6 bytes)"}},
		{"whitespace args mean {}", "list_dir", " \n ", false, []string{"a.txt"}},
		{"null args mean {}", "list_dir", "null", false, []string{"a.txt"}},
		{"panic is recovered", "boom", `{}`, true, []string{"boom: the tool failed unexpectedly (panic: kaboom)"}},
		{"runtime panic is recovered", "nilmap", `{}`, true, []string{"nilmap: the tool failed unexpectedly", "nil map"}},
		{"output over the intake limit is truncated", "huge", `{}`, false, []string{"original 50,000 bytes"}},
		{"valid call", "read_file", `{"path":"a.txt"}`, false, []string{"   1\thello"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Run(context.Background(), env, tc.tool, tc.args)
			if res.IsError != tc.wantErr {
				t.Errorf("IsError = %v, want %v (%q)", res.IsError, tc.wantErr, res.Content)
			}
			mustContain(t, res.Content, tc.want...)
			if len(res.Content) > IntakeLimit+300 {
				t.Errorf("content is %d bytes, over the intake limit", len(res.Content))
			}
		})
	}
	t.Run("empty args reach the tool as {}", func(t *testing.T) {
		r.Run(context.Background(), env, "echo", "")
		if string(got) != "{}" {
			t.Errorf("tool got %q, want {}", got)
		}
	})
	t.Run("no workspace", func(t *testing.T) {
		res := r.Run(context.Background(), nil, "read_file", `{"path":"a.txt"}`)
		if !res.IsError || !strings.Contains(res.Content, "no workspace") {
			t.Errorf("got %+v", res)
		}
	})
}

func TestDecodeParams(t *testing.T) {
	_, env := newWorkspace(t, map[string]string{"a.txt": "x\n"})
	cases := []struct {
		name string
		tool Tool
		args string
		want string
	}{
		{"unknown parameter", ReadFile(), `{"file_path":"a.txt"}`, `read_file: unknown parameter "file_path"; the parameters are path, offset, limit`},
		{"wrong type", ReadFile(), `{"path":"a.txt","offset":"3"}`, `parameter "offset" must be an integer, got a JSON string`},
		{"not an object", Grep(), `"foo"`, "must be a JSON object"},
		{"broken JSON passed directly", EditFile(), `{"path":`, "not valid JSON"},
		{"missing required", WriteFile(), `{"path":"b.txt"}`, "content is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.tool, env, tc.args)
			if !res.IsError {
				t.Fatalf("want an error, got %q", res.Content)
			}
			mustContain(t, res.Content, tc.want)
		})
	}
}

func TestBuiltinSpecs(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range Builtins() {
		s := b.Spec()
		t.Run(s.Name, func(t *testing.T) {
			if seen[s.Name] {
				t.Fatal("duplicate name")
			}
			seen[s.Name] = true
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(s.Parameters, &schema); err != nil {
				t.Fatalf("parameters are not valid JSON: %v", err)
			}
			if schema.Type != "object" || len(schema.Properties) == 0 {
				t.Errorf("parameters are not an object schema: %s", s.Parameters)
			}
			for _, req := range schema.Required {
				if _, ok := schema.Properties[req]; !ok {
					t.Errorf("required %q is not a property", req)
				}
			}
			if len(s.Description) < 80 || strings.TrimSpace(s.Description) != s.Description {
				t.Errorf("description is short or untrimmed: %q", s.Description)
			}
			// Each parameter is described once, in the schema: the
			// description is prose about the tool, with no list of them.
			for prop, raw := range schema.Properties {
				var p struct {
					Description string `json:"description"`
				}
				if json.Unmarshal(raw, &p) != nil || len(p.Description) < 10 {
					t.Errorf("parameter %q has no description in the schema", prop)
				}
			}
			if strings.Contains(s.Description, "Parameters:") {
				t.Errorf("the description lists the parameters the schema describes: %q", s.Description)
			}
			gated := s.Name == "write_file" || s.Name == "edit_file" || s.Name == "run_shell" || s.Name == "web_fetch"
			if b.NeedsApproval() != gated {
				t.Errorf("NeedsApproval = %v, want %v", b.NeedsApproval(), gated)
			}
			if !bytes.Equal(b.Spec().Parameters, s.Parameters) {
				t.Error("Spec is not stable")
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	cases := []struct {
		name, tool, args, want string
	}{
		{"run_shell", "run_shell", `{"command":"go test ./..."}`, "run_shell: go test ./..."},
		{"run_shell multi-line", "run_shell", `{"command":"cd x\ngo test"}`, "run_shell: cd x ⏎ go test"},
		{"edit_file", "edit_file", `{"path":"calc/calc.go","old_string":"a","new_string":"b"}`, "edit_file calc/calc.go"},
		{"edit_file replace_all", "edit_file", `{"path":"a.go","old_string":"a","new_string":"b","replace_all":true}`, "edit_file a.go (all occurrences)"},
		{"write_file", "write_file", `{"path":"a.go","content":"12345"}`, "write_file a.go (5 bytes)"},
		{"read_file offset", "read_file", `{"path":"a.go","offset":401}`, "read_file a.go from line 401"},
		{"list_dir default", "list_dir", ``, "list_dir ."},
		{"grep", "grep", `{"pattern":"func main","glob":"*.go"}`, "grep “func main” in . (*.go)"},
		{"grep pattern not escaped again", "grep", `{"pattern":"Add\\(","path":"calc/"}`, `grep Add\( in calc/`},
		{"checklist write", "checklist_write", `{"items":[{"content":"a"},{"content":"b"},{"content":"c"}]}`, "Checklist: 3 items"},
		{"checklist update", "checklist_update", `{"id":"2","status":"in_progress"}`, "Checklist: item 2 → in progress"},
		{"bad JSON", "run_shell", `{"command": "rm -rf`, `run_shell {"command": "rm -rf`},
		{"unknown tool", "mcp_search", `{"q":"x"}`, "mcp_search q: x"},
		{"wrong types", "edit_file", `{"path":42}`, "edit_file path: 42"},
		{"terminal escape", "run_shell", `{"command":"echo \u001b[31mred"}`, `run_shell: echo \u001b[31mred`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summarize(tc.tool, json.RawMessage(tc.args)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("long command is capped", func(t *testing.T) {
		args, _ := json.Marshal(map[string]string{"command": strings.Repeat("echo hi; ", 100)})
		got := Summarize("run_shell", args)
		if n := len([]rune(got)); n > summaryLimit+1 || !strings.HasSuffix(got, "…") {
			t.Errorf("summary has %d runes: %q", n, got)
		}
	})
}

type recordingApprover struct {
	decision Decision
	err      error
	reqs     []ApprovalRequest
}

func (a *recordingApprover) Approve(_ context.Context, req ApprovalRequest) (Decision, error) {
	a.reqs = append(a.reqs, req)
	return a.decision, a.err
}

// An alias runs the tool it names but is not in the catalog.
func TestAliasIsFoundButNotListed(t *testing.T) {
	r := NewRegistry()
	r.AddBuiltin(ReadFile())
	r.Alias("open_file", "read_file")
	r.Alias("ghost", "no_such_tool")
	if got, ok := r.Lookup("open_file"); !ok || got.Spec().Name != "read_file" {
		t.Fatalf("Lookup(open_file) = %v, %v", got, ok)
	}
	if _, ok := r.Lookup("ghost"); ok {
		t.Error("an alias of no registered tool was found")
	}
	for _, n := range r.Names() {
		if n == "open_file" {
			t.Error("the alias is listed")
		}
	}
	if c := r.Catalog(); len(c) != 1 || c[0].Name != "read_file" {
		t.Errorf("catalog %+v", c)
	}
}
