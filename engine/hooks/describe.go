package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// maxContext caps, in bytes, what the hooks of one event add to the
// conversation.
const maxContext = 10_000

// Text makes hook output fit for the conversation: trimmed, capped at
// 10,000 bytes, its secrets redacted and its engine tags neutralised, so
// it is data and can never open or close an engine block. It returns the
// count of secrets redacted.
func Text(s string) (string, int) {
	s = text.ClipBytes(strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD"), maxContext)
	out, n := secrets.Count(s)
	return transcript.Neutralize(out), n
}

// First returns the first of ss that is not blank.
func First(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// Describe says in one sentence what a run worth showing did: it blocked
// or refused (a message, a call, the end of a turn), changed a call's
// arguments, ended the turn, failed or timed out, or said something. bad
// is set when the run blocked or failed; ok is false for a run not worth
// showing.
func Describe(r Run) (reason string, bad, ok bool) {
	o := r.Outcome
	who := fmt.Sprintf("the %s hook %q", r.Event, text.Clip(r.Command, 60))
	what := ""
	if r.Subject != "" && (r.Event == PreToolUse || r.Event == PostToolUse) {
		what = " " + r.Subject
	}
	bad = true
	switch {
	case o.Error != "":
		reason = o.Error
	case o.Stop:
		reason = fmt.Sprintf("%s ended the turn: %s", who, text.OneLine(First(o.StopReason, "no reason given"), 200))
	case r.Event == PreToolUse && o.Permission == Deny:
		reason = fmt.Sprintf("%s refused%s: %s", who, what, text.OneLine(First(o.PermissionReason, o.Reason, "no reason given"), 200))
	case r.Event == UserPromptSubmit && o.Block:
		reason = fmt.Sprintf("%s refused the message: %s", who, text.OneLine(First(o.Reason, "no reason given"), 200))
	case r.Event == Stop && o.Block:
		reason, bad = fmt.Sprintf("%s did not let the turn end yet: %s", who, text.OneLine(First(o.Reason, "no reason given"), 200)), false
	case o.Block:
		reason, bad = fmt.Sprintf("%s objected%s: %s", who, what, text.OneLine(First(o.Reason, "no reason given"), 200)), false
	case len(o.UpdatedInput) > 0:
		reason, bad = fmt.Sprintf("%s changed the arguments of%s", who, what), false
	case o.Message != "":
		reason, bad = fmt.Sprintf("%s says: %s", who, text.OneLine(o.Message, 200)), false
	default:
		return "", false, false
	}
	return reason, bad, true
}

// SameJSON reports whether two argument texts hold the same JSON.
func SameJSON(a, b string) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, []byte(a)) != nil || json.Compact(&y, []byte(b)) != nil {
		return a == b
	}
	var va, vb any
	if json.Unmarshal(x.Bytes(), &va) != nil || json.Unmarshal(y.Bytes(), &vb) != nil {
		return x.String() == y.String()
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// ArgsChange describes, on one line, how the arguments after differ from
// before, field by field: `command: "rm -rf build" → "rm -rf ./build"`.
func ArgsChange(before, after string) string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal([]byte(before), &a) != nil || json.Unmarshal([]byte(after), &b) != nil {
		return fmt.Sprintf("%s → %s", shownValue(before), shownValue(after))
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inB:
			parts = append(parts, fmt.Sprintf("%s: %s → (removed)", text.OneLine(k, 40), shownValue(string(va))))
		case !inA:
			parts = append(parts, fmt.Sprintf("%s: (none) → %s", text.OneLine(k, 40), shownValue(string(vb))))
		case !SameJSON(string(va), string(vb)):
			parts = append(parts, fmt.Sprintf("%s: %s → %s", text.OneLine(k, 40), shownValue(string(va)), shownValue(string(vb))))
		}
	}
	if len(parts) == 0 {
		return "the same values, written differently"
	}
	return strings.Join(parts, "; ")
}

// shownValue is a JSON value compacted to one printable line for the
// approval card.
func shownValue(v string) string {
	var x any
	if json.Unmarshal([]byte(v), &x) == nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(x) == nil {
			v = strings.TrimSpace(b.String())
		}
	}
	return text.OneLine(transcript.NeutralizeLine(v), 160)
}
