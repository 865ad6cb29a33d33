package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
)

// bigFiles writes n files of about 6K tokens each into ws.
func bigFiles(t *testing.T, ws string, n int) {
	t.Helper()
	for i := range n {
		var b strings.Builder
		for l := range 380 {
			fmt.Fprintf(&b, "file %d line %d: alpha beta gamma delta epsilon zeta eta theta %d\n", i, l, i*l)
		}
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("big%d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll is a parent that delegates reading n files to one sub-agent,
// and a child that reads them one per step, then reports.
func readAll(n int) llmtest.ScriptFunc {
	return func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			read := 0
			for _, m := range r.Messages {
				if m.Role == "tool" || strings.Contains(m.Content, "tool result cleared") {
					read++
				}
			}
			if k := toolResults(r.Messages); k < n {
				return llmtest.Call("read_file", fmt.Sprintf(`{"path":"big%d.txt","limit":2000}`, k))
			}
			return llmtest.Text(fmt.Sprintf("Report: read %d files; every line names its file.", n))
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("read the big files", "Read big0.txt to the last file and report.", "explore")}}
		}
		return llmtest.Text("The sub-agent reported.")
	}
}

// TestSubagentCompactsToStayInItsWindow: a child that reads more than
// its window holds clears its old tool results (the cheap layers of the
// turn's cascade) and reports; no request of it is above the window.
func TestSubagentCompactsToStayInItsWindow(t *testing.T) {
	const window, files = 32_000, 12
	h := newHarness(t, readAll(files), tool.ApproveAll{})
	h.cfg.ContextWindow = window
	h.cfg.NoDiagnostics = true
	h.cfg.Subagents.MaxSteps = files + 4
	bigFiles(t, h.ws, files)
	s := h.session("child-compacts")
	if _, err := s.Run(context.Background(), "read them all through a sub-agent"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	children := 0
	for _, r := range h.srv.Requests() {
		if !isChildReq(r.Messages) {
			continue
		}
		children++
		if r.Prompt > window {
			t.Errorf("child request %d has %d prompt tokens, above its %d-token window", r.Index, r.Prompt, window)
		}
	}
	kids, err := s.Subagents().List()
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %+v, %v", kids, err)
	}
	k := kids[0]
	if k.Status != step.ReasonDone || k.Compactions == 0 || children != files+1 {
		t.Errorf("child %s: %d compactions, %d requests (want %d); status %s", k.ID, k.Compactions, children, files+1, k.Status)
	}
	if !strings.Contains(k.ReportHead, "read 12 files") {
		t.Errorf("report %q", k.ReportHead)
	}
	if k.Messages != 2+2*files {
		t.Errorf("the stored transcript holds %d messages; want every one of %d", k.Messages, 2+2*files)
	}
}

// TestSubagentThatCannotFitEndsWithAReport: when even the cheap layers
// leave no room for the next request, the child stops with what it has
// and says why, instead of sending a request the provider would refuse.
func TestSubagentThatCannotFitEndsWithAReport(t *testing.T) {
	const window = 8_000
	h := newHarness(t, readAll(3), tool.ApproveAll{})
	h.cfg.ContextWindow = window
	h.cfg.NoDiagnostics = true
	bigFiles(t, h.ws, 3)
	s := h.session("child-full")
	res, err := s.Run(context.Background(), "read them all through a sub-agent")
	if err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	for _, r := range h.srv.Requests() {
		if isChildReq(r.Messages) && r.Prompt > window {
			t.Errorf("child request %d has %d prompt tokens, above the window", r.Index, r.Prompt)
		}
	}
	kids, _ := s.Subagents().List()
	if len(kids) != 1 || kids[0].Status != subagent.ReasonContextFull {
		t.Fatalf("children %+v", kids)
	}
	var result string
	for _, m := range s.Snapshot().Messages() {
		if m.ToolName == subagent.TaskToolName {
			result = m.Text()
		}
	}
	if !strings.Contains(result, "no longer fits its 8,000-token window") || res.Answer == "" {
		t.Errorf("the parent read %q", result)
	}
}

// TestSubagentSummarisesWhenClearingIsNotEnough: a child whose own
// replies fill its window (long notes at every step, which the cheap
// layers do not clear) summarises with its model, goes on and reports;
// the summary request is a ledger row of the child's, and no request of
// it is above its window.
func TestSubagentSummarisesWhenClearingIsNotEnough(t *testing.T) {
	const window, files = 12_000, 24
	var steps atomic.Int32
	note := strings.Repeat("Noting what this file says about the stages and how they connect. ", 40)
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("Read the small files in order; each names its stage. Nothing failed.")
		case isChildReq(r.Messages):
			if k := int(steps.Add(1)) - 1; k < files {
				return llmtest.Reply{Content: note, ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"small%d.txt"}`, k)}}}
			}
			return llmtest.Text(fmt.Sprintf("Report: read %d files; each names its stage.", files))
		case toolResults(r.Messages) == 0:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("read the small files", "Read small0.txt to the last file and report.", "explore")}}
		}
		return llmtest.Text("The sub-agent reported.")
	})
	h := newHarness(t, script, tool.ApproveAll{})
	h.cfg.ContextWindow = window
	h.cfg.NoDiagnostics = true
	h.cfg.Subagents.MaxSteps = files + 4
	for i := range files {
		if err := os.WriteFile(filepath.Join(h.ws, fmt.Sprintf("small%d.txt", i)), []byte(fmt.Sprintf("stage %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := h.session("child-summarises")
	if _, err := s.Run(context.Background(), "read them all through a sub-agent"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	for _, r := range h.srv.Requests() {
		if isChildReq(r.Messages) && r.Prompt > window {
			t.Errorf("child request %d has %d prompt tokens, above its %d-token window", r.Index, r.Prompt, window)
		}
	}
	kids, err := s.Subagents().List()
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %+v, %v", kids, err)
	}
	k := kids[0]
	if k.Status != step.ReasonDone || k.Compactions == 0 || !strings.Contains(k.ReportHead, "read 24 files") {
		t.Fatalf("child %s: status %s, %d compactions, report %q", k.ID, k.Status, k.Compactions, k.ReportHead)
	}
	rows, err := s.Audit().Ledger()
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, row := range rows {
		if row.Subagent == k.ID && row.Kind == ledger.KindSummary {
			summaries++
		}
	}
	if summaries == 0 {
		t.Error("the child's summary request has no ledger row of its own")
	}
}
