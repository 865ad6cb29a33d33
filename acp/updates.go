package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/diff"
	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// callInfo is what the server told the client about one tool call.
type callInfo struct {
	name  string
	title string
	kind  acp.ToolKind
	// diff is the call's change as an ACP diff (edits only), kept for the
	// permission request and the final update.
	diff      []acp.ToolCallContent
	locations []acp.ToolCallLocation
	input     any
}

// event turns one engine event into the client's updates. It runs on the
// turn's goroutine, one event at a time, before the engine goes on.
func (st *session) event(e agent.Event) {
	if !st.ready() {
		return
	}
	switch e.Kind {
	case agent.EventDelta:
		if e.Delta == nil {
			return
		}
		st.mu.Lock()
		st.streamed = true
		st.mu.Unlock()
		if e.Delta.Reasoning != "" {
			st.send(withID(acp.UpdateAgentThoughtText(e.Delta.Reasoning), st.messageID()))
		}
		if e.Delta.Content != "" {
			st.send(withID(acp.UpdateAgentMessageText(e.Delta.Content), st.messageID()))
		}
	case agent.EventMessage:
		if e.Message != nil {
			st.message(*e.Message)
		}
	case agent.EventToolStart:
		if e.Call != nil {
			st.toolStart(*e.Call)
		}
	case agent.EventChecklist:
		st.send(planUpdate(e.Checklist))
	case agent.EventUsage:
		st.usage(e.Usage)
	case agent.EventRebuild:
		go st.sendUsage() // a compaction or a new cycle moved the level
	case agent.EventForm, agent.EventFormDone:
		st.form(e)
	case agent.EventSubagentStart, agent.EventSubagentStep, agent.EventSubagentEnd:
		st.subagent(e)
	case agent.EventSubagentMessage:
		if e.Message != nil && e.Message.Role == transcript.Tool {
			st.message(*e.Message) // ends a call announced for its approval
		}
	case agent.EventRetry:
		if e.Retry != nil {
			st.srv.logf("session %s: retrying (attempt %d of %d): %s", st.id, e.Retry.Attempt, e.Retry.MaxAttempts, text.FirstLine(e.Retry.Reason, 0))
		}
	case agent.EventMCP:
		if e.Err != "" {
			st.srv.logf("session %s: MCP: %s", st.id, text.FirstLine(e.Err, 0))
			return
		}
		go st.sendCommands() // a server's prompts may have come or gone
	case agent.EventHook, agent.EventError:
		if msg := cmp.Or(e.Err, e.Reason); msg != "" {
			st.srv.logf("session %s: %s: %s", st.id, e.Kind, text.FirstLine(msg, 0))
		}
	}
}

// message reports a committed message: the text of a reply that was not
// streamed, and a tool call's result.
func (st *session) message(m transcript.Message) {
	switch m.Role {
	case transcript.Assistant:
		st.mu.Lock()
		streamed := st.streamed
		st.streamed = false
		st.mu.Unlock()
		if !streamed && m.Kind == transcript.KindChat {
			id := st.messageID()
			if m.Reasoning != "" {
				st.send(withID(acp.UpdateAgentThoughtText(m.Reasoning), id))
			}
			if t := m.Text(); t != "" {
				st.send(withID(acp.UpdateAgentMessageText(t), id))
			}
		}
		st.endMessage()
	case transcript.Tool:
		st.mu.Lock()
		ci := st.calls[m.ToolCallID]
		delete(st.calls, m.ToolCallID)
		st.mu.Unlock()
		if ci == nil {
			return // a hidden call (the checklist's) or one never announced
		}
		content := resultContent(ci, m)
		if ci.name == "web_fetch" && m.IsError && strings.Contains(m.Text(), "Network switch is off") {
			content = append(content, acp.ToolContent(acp.TextBlock(NetworkNote)))
		}
		st.send(acp.UpdateToolCall(acp.ToolCallId(m.ToolCallID),
			acp.WithUpdateStatus(resultStatus(m)), acp.WithUpdateContent(content)))
	}
}

// NetworkNote is what the editor shows under a web_fetch refused because
// the session's Network switch is off: how to switch it on from there.
const NetworkNote = "To let Tally fetch pages in this session, turn on its Network option (the session's config option \"network\") and ask again."

func resultStatus(m transcript.Message) acp.ToolCallStatus {
	if m.IsError {
		return acp.ToolCallStatusFailed
	}
	return acp.ToolCallStatusCompleted
}

// resultContent is a finished call's content: an edit keeps its diff (with
// the error when it failed), other tools show their result.
func resultContent(ci *callInfo, m transcript.Message) []acp.ToolCallContent {
	out := append([]acp.ToolCallContent(nil), ci.diff...)
	text := m.Text()
	if len(ci.diff) > 0 && !m.IsError {
		return out
	}
	if text != "" {
		out = append(out, acp.ToolContent(acp.TextBlock(fence(clip(text)))))
	}
	return out
}

// toolStart announces a call about to run (or to ask for approval): its
// title, kind, location and, for an edit, the whole change as a diff.
func (st *session) toolStart(c transcript.ToolCall) {
	if hidden(c.Name) {
		return // the checklist tools show as the plan
	}
	ci := st.describe(c)
	if ch, ok := st.sess.Files().Preview(context.Background(), c); ok {
		ci.diff = changeContent(ch)
	}
	st.mu.Lock()
	st.calls[c.ID] = ci
	st.mu.Unlock()
	st.send(acp.StartToolCall(acp.ToolCallId(c.ID), ci.title,
		acp.WithStartKind(ci.kind), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartLocations(ci.locations), acp.WithStartRawInput(ci.input), acp.WithStartContent(ci.diff)))
}

// describe is the client's view of a call, before it runs.
func (st *session) describe(c transcript.ToolCall) *callInfo {
	ci := &callInfo{name: c.Name, title: tool.Summarize(c.Name, json.RawMessage(c.Arguments)), kind: kindOf(c.Name)}
	var args map[string]any
	if json.Unmarshal([]byte(c.Arguments), &args) == nil {
		ci.input = args
	}
	if p, _ := args["path"].(string); p != "" && filePath(c.Name) {
		loc := acp.ToolCallLocation{Path: st.abs(p)}
		if off, ok := args["offset"].(float64); ok && off >= 1 && off < 1e9 {
			loc.Line = acp.Ptr(int(off))
		}
		ci.locations = []acp.ToolCallLocation{loc}
	}
	return ci
}

// abs is a workspace path made absolute, as the protocol's paths are.
func (st *session) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(st.ws, filepath.FromSlash(p))
}

// hidden reports the tools whose calls are shown as something else: the
// checklist tools as the plan.
func hidden(name string) bool {
	return strings.HasPrefix(name, "checklist_") || strings.HasPrefix(name, "todo_")
}

// filePath reports the tools whose "path" argument names a file or
// folder of the workspace.
func filePath(name string) bool {
	switch name {
	case "read_file", "edit_file", "write_file", "list_dir", "grep":
		return true
	}
	return strings.HasPrefix(name, "lsp_")
}

// kindOf is the ACP kind of a Tally tool, which picks the editor's icon.
func kindOf(name string) acp.ToolKind {
	switch name {
	case "read_file", "list_dir", "retrieve_tool_result", skill.ToolName:
		return acp.ToolKindRead
	case "edit_file", "write_file":
		return acp.ToolKindEdit
	case "grep", "recall_archive":
		return acp.ToolKindSearch
	case "run_shell":
		return acp.ToolKindExecute
	case "web_fetch":
		return acp.ToolKindFetch
	case subagent.TaskToolName:
		return acp.ToolKindThink
	}
	if strings.HasPrefix(name, "lsp_") {
		return acp.ToolKindSearch
	}
	return acp.ToolKindOther
}

// changeContent is a previewed change as an ACP diff of the whole file;
// none for a binary or oversized file.
func changeContent(ch tool.Change) []acp.ToolCallContent {
	if ch.Diff.Binary || ch.Diff.TooLarge || !utf8.Valid(ch.Before) || !utf8.Valid(ch.After) {
		return nil
	}
	if ch.Existed {
		return []acp.ToolCallContent{acp.ToolDiffContent(ch.Abs, string(ch.After), string(ch.Before))}
	}
	return []acp.ToolCallContent{acp.ToolDiffContent(ch.Abs, string(ch.After))}
}

// hunkContent is a diff as ACP diffs of its hunks, for a change that was
// not previewed whole (a sub-agent's).
func hunkContent(d *diff.Diff, abs string) []acp.ToolCallContent {
	if d == nil || d.Binary || d.TooLarge {
		return nil
	}
	var out []acp.ToolCallContent
	for _, h := range d.Hunks {
		var before, after strings.Builder
		for _, l := range h.Lines {
			switch l.Kind {
			case diff.Remove:
				before.WriteString(l.Text + l.EOL)
			case diff.Add:
				after.WriteString(l.Text + l.EOL)
			default:
				before.WriteString(l.Text + l.EOL)
				after.WriteString(l.Text + l.EOL)
			}
		}
		if d.New {
			out = append(out, acp.ToolDiffContent(abs, after.String()))
		} else {
			out = append(out, acp.ToolDiffContent(abs, after.String(), before.String()))
		}
	}
	return out
}

// planUpdate is the checklist as the client's plan.
func planUpdate(items []todo.Item) acp.SessionUpdate {
	entries := make([]acp.PlanEntry, 0, len(items))
	for _, it := range items {
		status := acp.PlanEntryStatusPending
		switch it.Status {
		case todo.InProgress:
			status = acp.PlanEntryStatusInProgress
		case todo.Completed:
			status = acp.PlanEntryStatusCompleted
		}
		entries = append(entries, acp.PlanEntry{Content: it.Content, Status: status, Priority: acp.PlanEntryPriorityMedium})
	}
	return acp.UpdatePlan(entries...)
}

// subagent shows a sub-agent's progress on its task call.
func (st *session) subagent(e agent.Event) {
	c := e.Subagent
	if c == nil || c.CallID == "" {
		return
	}
	st.mu.Lock()
	_, known := st.calls[c.CallID]
	st.mu.Unlock()
	if !known {
		return
	}
	line := fmt.Sprintf("%s (%s): %s, %d of %d steps", c.ID, c.Kind, c.Status, c.Steps, c.MaxSteps)
	st.send(acp.UpdateToolCall(acp.ToolCallId(c.CallID),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(line))})))
}

// resultLimit bounds the characters of a tool result shown in the editor;
// the model sees the whole result.
const resultLimit = 20000

// clip cuts s to resultLimit characters, saying how much was left out.
func clip(s string) string {
	if len(s) <= resultLimit {
		return s
	}
	cut := resultLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes)", len(s)-cut)
}

// fence wraps text in a Markdown code fence longer than any run of
// backticks in it, so the editor shows it as it is.
func fence(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}
