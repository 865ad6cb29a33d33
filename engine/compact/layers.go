package compact

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// Layer names, cheapest first.
const (
	LayerIntake    = "intake"
	LayerMicro     = "micro"
	layerPrune     = "prune"
	LayerMemory    = "memory"
	LayerSummary   = "summary"
	layerEmergency = "emergency"
)

// Change actions.
const (
	ActionIntake    = "truncated-at-intake" // reported only; nothing changes
	ActionCleared   = "cleared"             // micro: content replaced by a placeholder
	actionPruned    = "pruned"              // prune: older duplicate replaced by one line
	actionReplaced  = "replaced"            // memory: dropped, MEMORY.md stands in
	ActionSummarise = "summarise"           // summary: dropped, the summary stands in
	ActionDrop      = "drop"                // emergency: dropped without a summary
)

// Layer limits (DESIGN §4).
const (
	// MicroIdle is the gap since the last assistant message after which
	// unpinned tool results are cleared.
	MicroIdle = 60 * time.Minute
	// microBytes is the total tool-result text above which unpinned tool
	// results are cleared.
	microBytes = 32 << 10
	// pruneCheckBytes is how much pruned text passes between checks of the
	// level against the threshold.
	pruneCheckBytes = 16 << 10
	// maxArgsShown is the longest argument text quoted in a placeholder.
	maxArgsShown = 120
)

// intakeMarker starts the envelope the tool registry puts into a result it
// shortened at intake.
const intakeMarker = "[... truncated:"

// Placeholder prefixes, used to recognise results a layer already shrank.
const (
	clearedPrefix = "[tool result cleared"
	prunedPrefix  = "[pruned:"
)

// Change is one message a layer rewrote (or, for intake, reports).
type Change struct {
	Index        int    `json:"index"`
	Action       string `json:"action"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Note         string `json:"note,omitempty"`
}

// LayerReport says what one layer of the cascade did or would do.
type LayerReport struct {
	Name string `json:"name"`
	// Ran is true when the layer looked at the messages.
	Ran bool `json:"ran"`
	// Enough is true when the level after the layer is at or under the
	// goal: the threshold, or the plan's target (see [Input.Target]).
	Enough bool `json:"enough"`
	// Estimated is true when the layer needs a model call or is a last
	// resort, so the figures are a forecast of what it would do.
	Estimated bool `json:"estimated,omitempty"`
	// Skipped says why the layer did not run.
	Skipped      string   `json:"skipped,omitempty"`
	Changes      []Change `json:"changes,omitempty"`
	TokensBefore int      `json:"tokens_before"`
	TokensAfter  int      `json:"tokens_after"`
}

// Intake is the first layer: tool results longer than the intake limit
// were already shortened when they arrived, so it only reports them. The
// returned Input has Tokens and Level filled in and the same messages.
func Intake(in Input, pins []Pin) (Input, LayerReport) {
	in = normalized(in)
	rep := LayerReport{Name: LayerIntake, Ran: true, TokensBefore: in.Level, TokensAfter: in.Level}
	for i, m := range in.Messages {
		if m.Role == transcript.Tool && strings.Contains(m.Text(), intakeMarker) {
			rep.Changes = append(rep.Changes, Change{
				Index: i, Action: ActionIntake,
				TokensBefore: in.Tokens[i], TokensAfter: in.Tokens[i],
				Note: toolDesc(m.ToolName, resultArgs(in.Messages, i)),
			})
		}
	}
	rep.Enough = fits(in, in.Level)
	return in, rep
}

// Micro is micro-compaction. When at least [MicroIdle] has passed since the
// last assistant message, or the tool results hold more than [microBytes]
// of text, it replaces the content of unpinned tool results, oldest first,
// with a one-line placeholder naming the call, until the level fits (or,
// with Force, all of them). Message order, roles, call IDs and pairing are
// untouched. in is not modified.
func Micro(in Input, pins []Pin) (Input, LayerReport) {
	in = normalized(in)
	rep := LayerReport{Name: LayerMicro, TokensBefore: in.Level, TokensAfter: in.Level}
	if !keepGoing(in, in.Level) {
		rep.Skipped = "the level is already under the " + goalName(in)
		rep.Enough = true
		return in, rep
	}
	idle, gap := idleFor(in)
	size := toolResultBytes(in.Messages)
	if !idle && size <= microBytes {
		rep.Skipped = fmt.Sprintf("not stale: %s since the last reply and %s of tool results (clears after %d min idle or above %s)",
			describeGap(gap), byteSize(size), int(MicroIdle/time.Minute), byteSize(microBytes))
		rep.Enough = fits(in, in.Level)
		return in, rep
	}
	rep.Ran = true
	pinned := pinnedSet(pins)
	for i := range in.Messages {
		if !keepGoing(in, in.Level) {
			break
		}
		m := in.Messages[i]
		if m.Role != transcript.Tool || pinned[i] || Shrunk(m.Text()) {
			continue
		}
		body := m.Text()
		line := fmt.Sprintf("[tool result cleared to save context: %s returned %s chars; call the tool again if you need it]",
			toolDesc(m.ToolName, resultArgs(in.Messages, i)), text.Thousands(utf8.RuneCountInString(body)))
		if len(line) >= len(body) {
			continue
		}
		rep.Changes = append(rep.Changes, replace(&in, i, line, ActionCleared, ""))
	}
	rep.TokensAfter = in.Level
	rep.Enough = fits(in, in.Level)
	return in, rep
}

// Prune removes duplicate tool results. Among results of the same tool with
// the same canonical arguments the newest keeps its full text and older
// unpinned copies become one line. It works from the newest duplicate to
// the oldest, so the head of the request prefix stays byte-identical as
// long as possible, and checks the level every [pruneCheckBytes] of pruned
// text, stopping once it fits (unless Force). in is not modified.
func Prune(in Input, pins []Pin) (Input, LayerReport) {
	in = normalized(in)
	rep := LayerReport{Name: layerPrune, TokensBefore: in.Level, TokensAfter: in.Level}
	if !keepGoing(in, in.Level) {
		rep.Skipped = "the level is already under the " + goalName(in)
		rep.Enough = true
		return in, rep
	}
	rep.Ran = true
	newest := map[string]int{}
	keys := make([]string, len(in.Messages))
	for i, m := range in.Messages {
		if m.Role != transcript.Tool {
			continue
		}
		args, ok := resultArgsOK(in.Messages, i)
		if !ok {
			continue
		}
		keys[i] = m.ToolName + "\x00" + args
		newest[keys[i]] = i
	}
	pinned := pinnedSet(pins)
	pending := 0
	for i := len(in.Messages) - 1; i >= 0; i-- {
		k := keys[i]
		if k == "" || newest[k] == i || pinned[i] {
			continue
		}
		m := in.Messages[i]
		body := m.Text()
		if Shrunk(body) {
			continue
		}
		desc := toolDesc(m.ToolName, resultArgs(in.Messages, i))
		chars := text.Thousands(utf8.RuneCountInString(body))
		var line, note string
		if body == in.Messages[newest[k]].Text() {
			line = fmt.Sprintf("[pruned: identical to a later %s result; this copy had %s chars]", desc, chars)
			note = "identical to #" + fmt.Sprint(newest[k])
		} else {
			line = fmt.Sprintf("[pruned: superseded by a later %s call with the same arguments; this copy had %s chars]", desc, chars)
			note = "superseded by #" + fmt.Sprint(newest[k])
		}
		if len(line) >= len(body) {
			continue
		}
		pending += len(body) - len(line)
		rep.Changes = append(rep.Changes, replace(&in, i, line, actionPruned, note))
		if pending >= pruneCheckBytes {
			pending = 0
			if !keepGoing(in, in.Level) {
				break
			}
		}
	}
	rep.TokensAfter = in.Level
	rep.Enough = fits(in, in.Level)
	return in, rep
}

// replace swaps the text of message i for line, updates the token count and
// the level, and returns the change. The new count never exceeds the old
// one, so estimator differences cannot raise the level.
func replace(in *Input, i int, line, action, note string) Change {
	m := in.Messages[i]
	m.Blocks = []transcript.Block{{Type: transcript.BlockText, Text: line}}
	before := in.Tokens[i]
	after := min(MessageTokens(m), before)
	in.Messages[i] = m
	in.Tokens[i] = after
	in.Level -= in.scaled(before - after)
	if note == "" {
		note = toolDesc(m.ToolName, resultArgs(in.Messages, i))
	}
	return Change{Index: i, Action: action, TokensBefore: before, TokensAfter: after, Note: note}
}

// Shrunk reports whether a tool result's text is a compaction's
// placeholder: the result was cleared or pruned to save context.
func Shrunk(text string) bool {
	return strings.HasPrefix(text, clearedPrefix) || strings.HasPrefix(text, prunedPrefix)
}

// idleFor reports whether the last assistant message is at least MicroIdle
// old, and how old it is (negative when unknown).
func idleFor(in Input) (bool, time.Duration) {
	if in.Now.IsZero() {
		return false, -1
	}
	for i := len(in.Messages) - 1; i >= 0; i-- {
		m := in.Messages[i]
		if m.Role == transcript.Assistant && !m.Time.IsZero() {
			gap := in.Now.Sub(m.Time)
			return gap >= MicroIdle, gap
		}
	}
	return false, -1
}

func describeGap(d time.Duration) string {
	if d < 0 {
		return "an unknown time"
	}
	return fmt.Sprintf("%d min", int(d/time.Minute))
}

func toolResultBytes(msgs []transcript.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == transcript.Tool {
			n += len(m.Text())
		}
	}
	return n
}

// byteSize formats a byte count for people: "812 B", "32 KB", "1.5 MB".
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", n>>10)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// resultArgs returns the canonical arguments of the call that the tool
// result at i answers, or "" when they cannot be found.
func resultArgs(msgs []transcript.Message, i int) string {
	a, _ := resultArgsOK(msgs, i)
	return a
}

// resultArgsOK is resultArgs that also reports whether the arguments are
// known: from the result's Args, or from the matching call before it.
func resultArgsOK(msgs []transcript.Message, i int) (string, bool) {
	if i < 0 || i >= len(msgs) || msgs[i].Role != transcript.Tool {
		return "", false
	}
	m := msgs[i]
	if m.Args != "" {
		return canonical(m.Args), true
	}
	for j := i - 1; j >= 0; j-- {
		if msgs[j].Role != transcript.Assistant {
			continue
		}
		for _, c := range msgs[j].ToolCalls {
			if c.ID == m.ToolCallID {
				return canonical(c.Arguments), true
			}
		}
	}
	return "", false
}

// canonical returns args with sorted keys and no spacing, or the trimmed
// text itself when it is not valid JSON.
func canonical(args string) string {
	c, err := guard.Canonical(args)
	if err != nil {
		return strings.TrimSpace(args)
	}
	return c
}

// toolDesc names a call for a placeholder: the tool and its arguments, the
// arguments cut to maxArgsShown bytes.
func toolDesc(name, args string) string {
	if name == "" {
		name = "tool"
	}
	if args == "" {
		return name
	}
	return name + " " + text.ClipBytes(text.OneLine(args, 0), maxArgsShown)
}
