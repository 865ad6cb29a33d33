package hooks

import (
	"bytes"
	"encoding/json"
)

// Input is the event a hook reads on its standard input, as JSON with
// Claude Code's field names. The common fields are always there; the
// others only for the events they belong to.
type Input struct {
	// SessionID is the session's ID.
	SessionID string `json:"session_id"`
	// TranscriptPath is "": Tally keeps the conversation in its store,
	// not in a file a hook could read.
	TranscriptPath string `json:"transcript_path"`
	// Cwd is the workspace folder, where the hook runs.
	Cwd string `json:"cwd"`
	// HookEventName is the event.
	HookEventName Event `json:"hook_event_name"`
	// PermissionMode is the session's mode in Claude Code's words:
	// "default" (ask), "plan" (read-only), "acceptEdits" (auto-edit) or
	// "bypassPermissions" (full-auto).
	PermissionMode string `json:"permission_mode,omitempty"`

	// Prompt is the user's message (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`
	// ToolName, ToolInput (the arguments object) and, after the call,
	// ToolResponse (PreToolUse, PostToolUse).
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Trigger ("manual" or "auto") and CustomInstructions (PreCompact).
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	// StopHookActive says the agent already goes on because of a Stop
	// hook (Stop).
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	// Source is "startup", "resume" or "compact" (SessionStart).
	Source string `json:"source,omitempty"`
}

// PermissionMode returns Claude Code's name of a Tally permission mode
// ("read-only", "ask", "auto-edit", "full-auto"), or mode itself when it
// has none.
func PermissionMode(mode string) string {
	switch mode {
	case "read-only":
		return "plan"
	case "", "ask":
		return "default"
	case "auto-edit":
		return "acceptEdits"
	case "full-auto":
		return "bypassPermissions"
	}
	return mode
}

// ToolInput returns a call's arguments as the JSON object a hook reads:
// args itself when it is one, {} otherwise.
func ToolInput(args string) json.RawMessage {
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &v) != nil || v == nil {
		return json.RawMessage(`{}`)
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) != nil {
		return json.RawMessage(`{}`)
	}
	return b.Bytes()
}

// ToolResponse returns a call's result as the object a PostToolUse hook
// reads: {"content", "is_error", "success"}, and for run_shell also
// "stdout" (Claude Code's Bash field) with the same text.
func ToolResponse(tool, content string, isError bool) json.RawMessage {
	r := map[string]any{"content": content, "is_error": isError, "success": !isError}
	if tool == "run_shell" {
		r["stdout"] = content
	}
	b, err := json.Marshal(r)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// Encode returns in as the bytes a hook reads, one JSON object.
func (in Input) Encode() []byte {
	if len(in.ToolInput) > 0 && !json.Valid(in.ToolInput) {
		in.ToolInput = json.RawMessage(`{}`)
	}
	if len(in.ToolResponse) > 0 && !json.Valid(in.ToolResponse) {
		in.ToolResponse = json.RawMessage(`{}`)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}
