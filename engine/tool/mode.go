package tool

import (
	"fmt"
	"strings"
)

// Mode is a session's permission mode: what runs without asking, what
// asks, and what is refused.
type Mode string

// The permission modes, from the most to the least careful.
const (
	// ModeReadOnly refuses every call that edits files or runs commands.
	ModeReadOnly Mode = "read-only"
	// ModeAsk asks before every call that edits files or runs commands
	// (the default).
	ModeAsk Mode = "ask"
	// ModeAutoEdit applies workspace edits without asking; commands and
	// other gated tools still ask.
	ModeAutoEdit Mode = "auto-edit"
	// ModeFullAuto runs everything without asking, and commands only
	// inside the sandbox: it is refused where there is no sandbox.
	ModeFullAuto Mode = "full-auto"
)

// Modes lists the permission modes in the order a picker shows them.
var Modes = []Mode{ModeReadOnly, ModeAsk, ModeAutoEdit, ModeFullAuto}

// ParseMode reads a mode name; "" means ModeAsk.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeAsk, nil
	}
	for _, m := range Modes {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q; use read-only, ask, auto-edit or full-auto", s)
}

// Label is the mode's name for people, such as "Auto-edit".
func (m Mode) Label() string {
	switch m {
	case ModeReadOnly:
		return "Read-only"
	case ModeAutoEdit:
		return "Auto-edit"
	case ModeFullAuto:
		return "Full auto"
	default:
		return "Ask"
	}
}

// Explain says in one sentence what the mode lets run.
func (m Mode) Explain() string {
	switch m {
	case ModeReadOnly:
		return "the agent may read and search; edits and commands are refused"
	case ModeAutoEdit:
		return "workspace edits apply without asking; commands ask first"
	case ModeFullAuto:
		return "edits and commands run without asking, commands only inside the sandbox"
	default:
		return "edits and commands ask first"
	}
}

// Effect is what an approval-gated tool does to the machine.
type Effect int

// The effects, from the mildest.
const (
	// EffectCommands is the default for a gated tool: it runs commands or
	// does something else outside the file tools' confinement.
	EffectCommands Effect = iota
	// EffectEdits changes files inside the workspace only.
	EffectEdits
	// EffectExternal acts through another program Tally does not run
	// commands in (an MCP server): it always asks outside full-auto mode
	// (auto-edit does not cover it), and "Always allow" may be granted
	// whether or not commands are sandboxed, since the sandbox never
	// applied to it.
	EffectExternal
)

// Effecter is implemented by gated tools whose effect is milder than
// running commands.
type Effecter interface {
	Effect() Effect
}

// Effect reports that write_file only changes workspace files.
func (writeFile) Effect() Effect { return EffectEdits }

// Effect reports that edit_file only changes workspace files.
func (editFile) Effect() Effect { return EffectEdits }

// effectOf returns t's effect; gated tools that do not say are treated as
// running commands, the most careful choice.
func effectOf(t Tool) Effect {
	if e, ok := t.(Effecter); ok {
		return e.Effect()
	}
	return EffectCommands
}
