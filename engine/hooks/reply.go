package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

// Decision is a PreToolUse hook's permission decision.
type Decision string

// The permission decisions; "" is none.
const (
	Allow Decision = "allow" // run without asking (never past a refusal of the mode or the deny list)
	Deny  Decision = "deny"  // refuse the call
	Ask   Decision = "ask"   // ask the user even where the call would run without asking
)

// Outcome is what a hook's answer means. Every text in it is the hook's,
// untrusted: a caller neutralises it before the model reads it.
type Outcome struct {
	// Block is set by exit status 2 or "decision": "block": a
	// UserPromptSubmit refuses the message, a PreToolUse the call, a
	// PostToolUse tells the model Reason, a Stop makes the agent go on
	// with Reason as its instruction.
	Block bool `json:"block,omitempty"`
	// Reason is the hook's stderr (exit 2) or its "reason".
	Reason string `json:"reason,omitempty"`
	// Permission and PermissionReason are a PreToolUse hook's decision.
	Permission       Decision `json:"permission,omitempty"`
	PermissionReason string   `json:"permission_reason,omitempty"`
	// UpdatedInput replaces a PreToolUse call's arguments: a JSON object.
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
	// Context is added to the conversation: "additionalContext", or the
	// plain stdout of a UserPromptSubmit or SessionStart hook.
	Context string `json:"context,omitempty"`
	// Stop is "continue": false: the turn ends, StopReason tells the user.
	Stop       bool   `json:"stop,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// Message is "systemMessage", for the user.
	Message string `json:"message,omitempty"`
	// Error says why the hook failed or its answer was not usable, for
	// the user; it blocks nothing.
	Error string `json:"error,omitempty"`
}

// Blocked reports whether the outcome blocks or refuses: Block, Deny or
// Stop.
func (o Outcome) Blocked() bool { return o.Block || o.Permission == Deny || o.Stop }

// Interpret reads what run's answer means for its event: exit status 2
// blocks with stderr as the reason (for SessionStart and PreCompact, which
// cannot block, it is an error for the user); exit status 0 reads stdout
// as a JSON reply when it is a JSON object, and otherwise as added
// context for UserPromptSubmit and SessionStart; any other status, a
// timeout or a hook that could not run is an Error. It never panics.
func Interpret(run Run) Outcome {
	ev := run.Event
	switch {
	case run.Err != "":
		return Outcome{Error: fmt.Sprintf("the %s hook %q failed: %s", ev, text.Clip(run.Command, 80), run.Err)}
	case run.Exit == 2:
		reason := strings.TrimSpace(run.Stderr)
		if reason == "" {
			reason = fmt.Sprintf("the %s hook %q exited with status 2 without saying why", ev, text.Clip(run.Command, 80))
		}
		if ev == SessionStart || ev == PreCompact {
			return Outcome{Error: fmt.Sprintf("the %s hook %q exited with status 2: %s", ev, text.Clip(run.Command, 80), text.OneLine(reason, 300))}
		}
		o := Outcome{Block: true, Reason: reason}
		if ev == PreToolUse {
			o.Permission = Deny
		}
		return o
	case run.Exit != 0:
		o := Outcome{Error: fmt.Sprintf("the %s hook %q exited with status %d", ev, text.Clip(run.Command, 80), run.Exit)}
		if s := text.OneLine(run.Stderr, 300); s != "" {
			o.Error += ": " + s
		}
		return o
	}
	out := strings.TrimSpace(run.Stdout)
	if strings.HasPrefix(out, "{") {
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(out), &fields) == nil {
			return fromJSON(ev, run.Command, fields)
		}
	}
	if out != "" && (ev == UserPromptSubmit || ev == SessionStart) {
		return Outcome{Context: out}
	}
	return Outcome{}
}

// fromJSON reads a hook's JSON reply; fields of the wrong type are left
// out and named in the outcome's Error.
func fromJSON(ev Event, command string, f map[string]json.RawMessage) Outcome {
	var o Outcome
	var bad []string
	get := func(m map[string]json.RawMessage, key string, dst any) bool {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			return false
		}
		if json.Unmarshal(raw, dst) != nil {
			bad = append(bad, key)
			return false
		}
		return true
	}
	var cont bool
	if get(f, "continue", &cont) && !cont {
		o.Stop = true
		get(f, "stopReason", &o.StopReason)
	}
	get(f, "systemMessage", &o.Message)
	var decision, reason string
	get(f, "decision", &decision)
	get(f, "reason", &reason)
	switch strings.ToLower(decision) {
	case "":
	case "block":
		o.Block, o.Reason = true, reason
		if ev == PreToolUse {
			o.Permission, o.PermissionReason = Deny, reason
		}
	case "approve", "allow":
		if ev == PreToolUse {
			o.Permission, o.PermissionReason = Allow, reason
		}
	default:
		bad = append(bad, "decision")
	}
	var spec map[string]json.RawMessage
	if get(f, "hookSpecificOutput", &spec) {
		var name string
		get(spec, "hookEventName", &name)
		if name != "" && name != string(ev) {
			bad = append(bad, "hookSpecificOutput (for "+text.Clip(name, 30)+", not "+string(ev)+")")
		} else {
			readSpecific(ev, spec, get, &o, &bad)
		}
	}
	if len(bad) > 0 {
		o.Error = fmt.Sprintf("the %s hook %q answered JSON whose %s could not be used; see docs/hooks.md for the reply's fields", ev, text.Clip(command, 80), strings.Join(bad, ", "))
	}
	return o
}

// readSpecific reads hookSpecificOutput into o.
func readSpecific(ev Event, spec map[string]json.RawMessage, get func(map[string]json.RawMessage, string, any) bool, o *Outcome, bad *[]string) {
	var ctx string
	if get(spec, "additionalContext", &ctx) {
		o.Context = ctx
	}
	if ev != PreToolUse {
		return
	}
	var pd string
	if get(spec, "permissionDecision", &pd) {
		switch d := Decision(strings.ToLower(pd)); d {
		case Allow, Deny, Ask:
			o.Permission = d
			o.PermissionReason = ""
			get(spec, "permissionDecisionReason", &o.PermissionReason)
		default:
			*bad = append(*bad, "permissionDecision")
		}
	}
	var upd map[string]json.RawMessage
	if raw, ok := spec["updatedInput"]; ok && string(raw) != "null" {
		var b bytes.Buffer
		if json.Unmarshal(raw, &upd) != nil || upd == nil || json.Compact(&b, raw) != nil {
			*bad = append(*bad, "updatedInput (not a JSON object)")
		} else {
			o.UpdatedInput = b.Bytes()
		}
	}
}

// Combine joins the outcomes of the hooks one event ran, in their order:
// any block, deny or stop wins (deny over ask over allow), the reasons,
// contexts, messages and errors are joined, the first stop reason is kept
// and, when several hooks changed the arguments, the last one's change
// is.
func Combine(outs []Outcome) Outcome {
	var c Outcome
	rank := map[Decision]int{"": 0, Allow: 1, Ask: 2, Deny: 3}
	join := func(dst *string, s, sep string) {
		if s = strings.TrimSpace(s); s == "" {
			return
		}
		if *dst != "" {
			*dst += sep
		}
		*dst += s
	}
	for _, o := range outs {
		c.Block = c.Block || o.Block
		join(&c.Reason, o.Reason, "\n")
		if rank[o.Permission] > rank[c.Permission] {
			c.Permission = o.Permission
		}
		if o.Permission != "" {
			join(&c.PermissionReason, o.PermissionReason, "\n")
		}
		if len(o.UpdatedInput) > 0 {
			c.UpdatedInput = o.UpdatedInput
		}
		join(&c.Context, o.Context, "\n\n")
		if o.Stop && !c.Stop {
			c.Stop, c.StopReason = true, o.StopReason
		}
		join(&c.Message, o.Message, "\n")
		join(&c.Error, o.Error, "; ")
	}
	return c
}
