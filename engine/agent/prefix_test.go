package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/tool"
)

type extraTool struct{ name string }

func (e extraTool) Spec() tool.Spec {
	return tool.Spec{Name: e.name, Description: "extra " + e.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (extraTool) NeedsApproval() bool { return false }
func (extraTool) Run(context.Context, *tool.Env, json.RawMessage) tool.Result {
	return tool.Result{Content: "ok"}
}

// addTool adds t to the catalog after the built-ins, or, deferred, at its
// very end, as MCP tools and deferred tools join a running session.
func addTool(s *Session, t tool.Tool, deferred bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if deferred {
		s.tools.Activate(t)
	} else {
		s.tools.AddExtra(t)
	}
	s.resetPrefix()
}

func TestExtraAndDeferredToolsKeepBuiltinOffsets(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("1"), llmtest.Text("2"), llmtest.Text("3")), nil)
	s := h.session("tools")
	ctx := context.Background()
	if _, err := s.Run(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	before := s.Snapshot().Fingerprint
	addTool(s, extraTool{"mcp_search"}, false)
	if _, err := s.Run(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	addTool(s, extraTool{"aaa_deferred"}, true) // sorts first by name, but is appended last
	if _, err := s.Run(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	after := s.Snapshot().Fingerprint
	for i, b := range before.ToolList {
		a := after.ToolList[i]
		if a.Name != b.Name || a.Offset != b.Offset || a.SHA != b.SHA {
			t.Errorf("built-in tool %d moved: %+v -> %+v", i, b, a)
		}
	}
	n := len(after.ToolList)
	if after.ToolList[n-2].Name != "mcp_search" || after.ToolList[n-1].Name != "aaa_deferred" {
		t.Errorf("catalog tail = %s, %s", after.ToolList[n-2].Name, after.ToolList[n-1].Name)
	}
	drifts := h.rec.kinds(EventDrift)
	if len(drifts) != 2 || drifts[0].Drift.Name != "mcp_search" || drifts[1].Drift.Name != "aaa_deferred" || drifts[0].Drift.Booked {
		t.Fatalf("drift events = %+v", drifts)
	}
	// The request bytes of every earlier tool are unchanged on the wire.
	reqs := h.srv.Requests()
	var t1, t3 struct {
		Tools []json.RawMessage `json:"tools"`
	}
	json.Unmarshal(reqs[0].Body, &t1)
	json.Unmarshal(reqs[2].Body, &t3)
	for k := range t1.Tools {
		if string(t1.Tools[k]) != string(t3.Tools[k]) {
			t.Errorf("tool %d bytes changed on the wire", k)
		}
	}
	if len(t3.Tools) != len(t1.Tools)+2 {
		t.Errorf("%d tools after adding two to %d", len(t3.Tools), len(t1.Tools))
	}
}

func TestAgentsFileIsReadOnlyAtSessionStart(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("a"), llmtest.Text("b"), llmtest.Text("c")), nil)
	agents := filepath.Join(h.ws, "AGENTS.md")
	os.WriteFile(agents, []byte("Use tabs."), 0o644)
	s := h.session("agents")
	ctx := context.Background()
	s.Run(ctx, "one")
	os.WriteFile(agents, []byte("Use spaces."), 0o644)
	s.Run(ctx, "two")
	reopened, err := Open(h.cfg, "agents")
	if err != nil {
		t.Fatal(err)
	}
	reopened.Run(ctx, "three")
	for i, r := range h.srv.Requests() {
		sys := r.Messages[0].Content
		if !strings.Contains(sys, "Use tabs.") || strings.Contains(sys, "Use spaces.") {
			t.Errorf("request %d system prompt does not keep the AGENTS.md read at session start", i)
		}
	}
	if d := h.rec.kinds(EventDrift); len(d) != 0 {
		t.Errorf("unexpected drift: %+v", d[0].Drift)
	}
	fresh := h.session("agents-new")
	if !strings.Contains(fresh.Audit().NextRequest().Messages[0].Content, "Use spaces.") {
		t.Error("a new session did not pick up the changed AGENTS.md")
	}
}

func TestDriftAutopsyNamesTheSection(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("a"), llmtest.Text("b")), nil)
	s := h.session("drift")
	ctx := context.Background()
	s.Run(ctx, "one")
	// Something rewrites the environment section behind the engine's back.
	secs := SystemSections(s.meta.Workspace, prompt.LoadContext(s.meta.Workspace, ""))
	for i := range secs {
		if secs[i].Name == "environment" {
			secs[i].Text += "\nshell: zsh"
		}
	}
	oldSystem := s.st.System
	s.st.System, s.st.Spans = prompt.Assemble(secs)
	s.resetPrefix()
	s.Run(ctx, "two")
	d := h.rec.kinds(EventDrift)
	if len(d) != 1 {
		t.Fatalf("%d drift events; want 1", len(d))
	}
	got := d[0].Drift
	want := len(oldSystem) // the change is an append at the end of the environment section
	if got.Part != "system" || got.Name != "environment" || got.Booked || got.Offset != want {
		t.Errorf("drift = %+v; want unbooked system drift in environment at %d", got, want)
	}
	rows, _ := s.Audit().Ledger()
	if rows[len(rows)-1].Drift == nil || rows[0].Drift != nil {
		t.Errorf("ledger drift markers wrong: first %v, last %v", rows[0].Drift, rows[len(rows)-1].Drift)
	}
}

func TestWireDedupeSendsReferences(t *testing.T) {
	big := strings.Repeat("the same large file line\n", 100)
	read := llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"big.txt"}`}
	var sha string
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		switch req.Step {
		case 0, 1:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{read}}
		case 2:
			last := req.Messages[len(req.Messages)-2].Content // before the status
			if i := strings.Index(last, `sha="`); i >= 0 {
				sha = last[i+5 : i+5+64]
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "retrieve_tool_result", Arguments: `{"sha":"` + sha + `","offset":1,"limit":2}`}}}
		}
		return llmtest.Text("done")
	})
	h := newHarness(t, script, nil)
	os.WriteFile(filepath.Join(h.ws, "big.txt"), []byte(big), 0o644)
	s := h.session("dedupe")
	if _, err := s.Run(context.Background(), "read big.txt twice"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	last := reqs[len(reqs)-1]
	var results []string
	for _, m := range last.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], "the same large file line") {
		t.Fatalf("results = %d", len(results))
	}
	if !strings.HasPrefix(results[1], "<TOOL_RESULT_REF sha=") || sha == "" {
		t.Errorf("second identical read not sent as a reference: %.80q", results[1])
	}
	if !strings.Contains(results[2], "the same large file line") || !strings.Contains(results[2], "lines 1-2 of") {
		t.Errorf("retrieve_tool_result = %q", results[2])
	}
	// The decision is a pure function of the log: a reopened session sends
	// byte-identical messages.
	again, _ := Open(h.cfg, "dedupe")
	a, b := s.Audit().NextRequest(), again.Audit().NextRequest()
	for i := range a.Messages {
		x, _ := json.Marshal(a.Messages[i])
		y, _ := json.Marshal(b.Messages[i])
		if string(x) != string(y) {
			t.Fatalf("message %d differs after reopening", i)
		}
	}
}
