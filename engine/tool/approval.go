package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ApprovalRequest describes one tool call awaiting the user's decision.
type ApprovalRequest struct {
	CallID    string // the model's id for the call
	Tool      string // tool name
	Arguments string // the raw JSON arguments, exactly as the model sent them
	Summary   string // a one-line human summary, see [Summarize]
}

// Decision is the user's answer to an [ApprovalRequest]. The zero value is
// [Deny].
type Decision int

// The possible decisions.
const (
	// Deny refuses this call.
	Deny Decision = iota
	// Approve allows this call only.
	Approve
	// ApproveAlways allows this call and every later call of the same tool
	// for the rest of the session.
	ApproveAlways
)

// String returns "deny", "approve" or "approve always".
func (d Decision) String() string {
	switch d {
	case Deny:
		return "deny"
	case Approve:
		return "approve"
	case ApproveAlways:
		return "approve always"
	default:
		return fmt.Sprintf("Decision(%d)", int(d))
	}
}

// Approver decides whether an approval-gated call may run. Implementations
// may block (for example while a dialog is open) and should return ctx.Err()
// when ctx is cancelled first.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ApproveAll approves every request without asking; it backs the CLI's
// --yes flag.
type ApproveAll struct{}

// Approve always returns [Approve].
func (ApproveAll) Approve(context.Context, ApprovalRequest) (Decision, error) { return Approve, nil }

// DenyAll denies every request without asking.
type DenyAll struct{}

// Approve always returns [Deny].
func (DenyAll) Approve(context.Context, ApprovalRequest) (Decision, error) { return Deny, nil }

// Gate consults an [Approver] before approval-gated calls and remembers
// [ApproveAlways] answers per tool name for its lifetime, which is meant to
// be one session. It is safe for concurrent use.
type Gate struct {
	approver Approver
	mu       sync.Mutex
	always   map[string]bool
}

// NewGate returns a Gate asking a. A nil a denies every gated call.
func NewGate(a Approver) *Gate {
	return &Gate{approver: a, always: make(map[string]bool)}
}

// Allow reports whether the call may run. Tools whose NeedsApproval is false,
// and tools the user approved always earlier in the session, are allowed
// without asking. An error from the Approver (such as a cancelled context)
// is returned with allowed false.
func (g *Gate) Allow(ctx context.Context, t Tool, callID, args string) (allowed bool, err error) {
	if t == nil {
		return false, nil
	}
	if !t.NeedsApproval() {
		return true, nil
	}
	name := t.Spec().Name
	g.mu.Lock()
	always := g.always[name]
	g.mu.Unlock()
	if always {
		return true, nil
	}
	if g.approver == nil {
		return false, nil
	}
	d, err := g.approver.Approve(ctx, ApprovalRequest{
		CallID:    callID,
		Tool:      name,
		Arguments: args,
		Summary:   Summarize(name, json.RawMessage(args)),
	})
	if err != nil {
		return false, err
	}
	switch d {
	case ApproveAlways:
		g.mu.Lock()
		g.always[name] = true
		g.mu.Unlock()
		return true, nil
	case Approve:
		return true, nil
	default:
		return false, nil
	}
}

// DeniedResult is the error Result to hand back to the model when the user
// denies a call of the named tool.
func DeniedResult(name string) Result {
	return Result{
		Content: fmt.Sprintf("%s: the user denied this call; do not retry it unchanged, ask the user or try a different approach", name),
		IsError: true,
	}
}

// summaryLimit bounds the length of a summary in runes.
const summaryLimit = 200

// Summarize returns a one-line human summary of a call, such as
// "run_shell: go test ./..." or "edit_file calc/calc.go". It never fails:
// for unknown tools or arguments that are not valid JSON it falls back to the
// name followed by the raw arguments. Control characters are made visible
// (so a summary is safe to print on a terminal) and the result is at most
// about 200 runes.
func Summarize(name string, args json.RawMessage) string {
	name = oneLine(name, 60)
	var m map[string]any
	if err := json.Unmarshal(normalizeArgs(args), &m); err != nil {
		return fallbackSummary(name, args)
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		return s
	}
	num := func(k string) (float64, bool) {
		f, ok := m[k].(float64)
		return f, ok
	}
	var s string
	switch name {
	case "edit_file", "write_file", "read_file":
		if str("path") == "" {
			return fallbackSummary(name, args)
		}
	case "grep":
		if str("pattern") == "" {
			return fallbackSummary(name, args)
		}
	}
	switch name {
	case "run_shell":
		if str("command") == "" {
			return fallbackSummary(name, args)
		}
		s = name + ": " + str("command")
	case "edit_file":
		s = name + " " + str("path")
		if b, _ := m["replace_all"].(bool); b {
			s += " (all occurrences)"
		}
	case "write_file":
		s = name + " " + str("path")
		if c, ok := m["content"].(string); ok {
			s += " (" + byteCount(len(c)) + ")"
		}
	case "read_file":
		s = name + " " + str("path")
		if off, ok := num("offset"); ok && off > 1 {
			s += fmt.Sprintf(" from line %d", int(off))
		}
	case "list_dir":
		p := str("path")
		if p == "" {
			p = "."
		}
		s = name + " " + p
	case "grep":
		p := str("path")
		if p == "" {
			p = "."
		}
		s = fmt.Sprintf("%s %q in %s", name, str("pattern"), p)
		if g := str("glob"); g != "" {
			s += " (" + g + ")"
		}
	default:
		return fallbackSummary(name, args)
	}
	return oneLine(s, summaryLimit)
}

func fallbackSummary(name string, args json.RawMessage) string {
	a := strings.TrimSpace(string(args))
	if a == "" || a == "{}" || a == "null" {
		return name
	}
	return oneLine(name+" "+a, summaryLimit)
}

// oneLine makes s a single printable line of at most max runes: newlines
// become " ⏎ ", other control characters are escaped, invalid UTF-8 is
// replaced and long text is cut with "…".
func oneLine(s string, max int) string {
	var b strings.Builder
	n := 0
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = "\uFFFD"
		case r == '\r' && i < len(s) && s[i] == '\n':
			continue
		case r == '\n' || r == '\r':
			piece = " ⏎ "
		case r == '\t':
			piece = " "
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			piece = fmt.Sprintf("\\u%04x", r)
		default:
			piece = string(r)
		}
		pr := utf8.RuneCountInString(piece)
		if n+pr > max {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		n += pr
	}
	return b.String()
}
