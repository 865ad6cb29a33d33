package compact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tally-dev/tally/engine/record"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// Caps of the parts of the section a compaction merges into the system
// prompt. Every later request pays for the section, so the facts stay
// small (the long scripted session may cost at most 5 % more input than
// without them). They are the only limits on the facts part; change them
// here.
const (
	// RecordTokens caps the rendered work record.
	RecordTokens = 800
	// stubLines caps the one-line stubs of the user's older messages;
	// past it the oldest stubHead and the newest stay, with one line
	// counting the rest.
	stubLines = 30
	// stubHead is how many of the oldest stubs (the task statement
	// first) always stay listed.
	stubHead = 10
	// stubWords is how many first words of a message its stub quotes.
	stubWords = 10
	// droppedLines caps the index of dropped messages, newest first; one
	// more line counts the older ones.
	droppedLines = 30
	// droppedWhatBytes caps the description of one dropped message.
	droppedWhatBytes = 72
	// MaxCarriedStubs caps the stubs carried from compaction to
	// compaction in [Earlier]; past it the middle ones are counted only.
	MaxCarriedStubs = 4 * stubLines
)

// Headings and leads of the parts of the section, in their order: the
// record, the user's older words, the dropped index, then the summary or
// the memory file ([SummaryHeading], [memoryHeading]).
const (
	recordHeading  = "# Record of earlier work (facts)"
	wordsHeading   = "# The user's earlier words"
	droppedHeading = "# Dropped from the context"
	recordLead     = "Computed by Tally from the tool calls and their results when the context was compacted, not written by the model. Lines are facts as of then."
	wordsLead      = "These messages of the user did not fit the room kept for the user's words verbatim: one line each (turn · handle · first words). retrieve_tool_result with the handle returns the whole message. The user's newer messages are kept verbatim in the conversation."
	droppedLead    = "One line per message compaction removed, newest first (handle · turn · what · tokens). retrieve_tool_result with the handle reads it back whole; prefer that to running a tool again."
)

// Handle names a text in the blob store: "#" and the first 12 hex digits
// of its SHA-256. retrieve_tool_result resolves it once the caller has
// stored the text (see [Result.Dropped]).
func Handle(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "#" + hex.EncodeToString(sum[:])[:12]
}

// DroppedLine is one message a compaction removed.
type DroppedLine struct {
	// Handle is [Handle] of Text.
	Handle string          `json:"handle"`
	Role   transcript.Role `json:"role"`
	// Tool is the tool of a result, or the tools an assistant message
	// called, comma separated; "" otherwise.
	Tool string `json:"tool,omitempty"`
	// What describes the message in a few words, neutralised, one line.
	What   string `json:"what"`
	Tokens int    `json:"tokens"`
	Turn   int    `json:"turn"`
	// Text is what the handle names, as it was before any layer shrank
	// it: a tool result's Text, a message's Body followed, for an
	// assistant message that calls tools, by one "call NAME ARGS" line per
	// call. The caller stores it as a blob so the handle resolves.
	Text string `json:"-"`
}

// Earlier is what the facts part of a compaction carries to the next one:
// the stubs of the user's words and the dropped index, which would
// otherwise vanish when the next compaction rebuilds the section. The
// agent stores [Result.Earlier] and passes it back as [Input.Earlier].
type Earlier struct {
	// UserStubs are stub lines (see [StubLine]), oldest first.
	UserStubs []string `json:"user_stubs,omitempty"`
	// StubsOmitted counts stubs left out of UserStubs at MaxCarriedStubs.
	StubsOmitted int `json:"stubs_omitted,omitempty"`
	// Dropped are index lines, newest first, at most droppedLines.
	Dropped []string `json:"dropped,omitempty"`
	// DroppedOlder counts index lines past droppedLines.
	DroppedOlder int `json:"dropped_older,omitempty"`
}

// StubLine is the one line that stands for a human message past the
// budget of the user's words: `- turn 3 · #a1b2c3d4e5f6 · "first ten
// words…"`, the handle being [Handle] of m.Body().
func StubLine(m transcript.Message, turn int) string {
	body := m.Body()
	words := strings.Fields(body)
	quote := strings.Join(words[:min(len(words), stubWords)], " ")
	if len(words) > stubWords {
		quote += "…"
	}
	return fmt.Sprintf("- turn %d · %s · \"%s\"", turn, Handle(body), transcript.NeutralizeLine(quote))
}

// droppedText is the text a handle of a dropped message names (see
// DroppedLine.Text).
func droppedText(m transcript.Message) string {
	if m.Role == transcript.Tool {
		return m.Text()
	}
	var b strings.Builder
	b.WriteString(m.Body())
	for _, c := range m.ToolCalls {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("call " + orTool(c.Name) + " " + c.Arguments)
	}
	return b.String()
}

// droppedWhat describes message i of msgs for the index.
func droppedWhat(msgs []transcript.Message, i int) (what, tool string) {
	m := msgs[i]
	switch {
	case m.Role == transcript.Tool:
		what = orTool(m.ToolName)
		if brief := argsBrief(resultArgs(msgs, i)); brief != "" {
			what += " " + brief
		}
		if m.IsError {
			what = "failed " + what
		}
		tool = m.ToolName
	case m.Role == transcript.Assistant && len(m.ToolCalls) > 0:
		names := make([]string, len(m.ToolCalls))
		for k, c := range m.ToolCalls {
			names[k] = orTool(c.Name)
		}
		tool = strings.Join(names, ",")
		what = "assistant calls " + strings.Join(names, ", ")
		if b := strings.TrimSpace(m.Body()); b != "" {
			what += ": " + b
		}
	case m.Role == transcript.Assistant:
		what = "assistant: " + strings.TrimSpace(m.Body())
	default:
		what = describe(m) + ": " + strings.TrimSpace(m.Body())
	}
	return transcript.NeutralizeLine(text.ClipBytes(text.OneLine(what, 0), droppedWhatBytes)), tool
}

// droppedMinTokens is the smallest dropped message listed in the index:
// a line costs about as much as a message this small.
const droppedMinTokens = 30

// indexed reports whether a dropped message gets a line in the index. The
// user's words have their stubs; engine bookkeeping (status bars,
// acknowledgements), an assistant message that only calls tools (the
// lines of its results name the calls), a result an earlier compaction
// already replaced by a placeholder and a message under droppedMinTokens
// are stored but not listed, so the index stays small.
func indexed(m transcript.Message, tokens int) bool {
	switch {
	case m.IsPlainUserText():
		return false
	case m.Kind == transcript.KindStatus || m.Kind == transcript.KindAck:
		return false
	case m.Role == transcript.Assistant && len(m.ToolCalls) > 0 && strings.TrimSpace(m.Body()) == "":
		return false
	case m.Role == transcript.Tool && (Shrunk(m.Text()) || bookkeeping(m.ToolName)):
		return false
	}
	return tokens >= droppedMinTokens
}

// listed reports whether the section names a dropped message: by a stub,
// an index line, or (an assistant message that only calls tools) the
// index lines of its results.
func listed(m transcript.Message, tokens int) bool {
	if m.IsPlainUserText() || (m.Role == transcript.Assistant && len(m.ToolCalls) > 0 && strings.TrimSpace(m.Body()) == "") {
		return true
	}
	return indexed(m, tokens)
}

func indexLine(d DroppedLine) string {
	return fmt.Sprintf("- %s t%d %s (%s)", d.Handle, d.Turn, d.What, text.Thousands(d.Tokens))
}

// argsBrief renders a call's canonical JSON arguments in few tokens: the
// values of path, command, pattern and query first, then the other
// scalars as key=value, in key order; anything else as it is.
func argsBrief(args string) string {
	var obj map[string]any
	if args == "" || json.Unmarshal([]byte(args), &obj) != nil {
		return text.OneLine(args, 0)
	}
	var parts []string
	for _, k := range []string{"path", "command", "pattern", "query"} {
		if v, ok := obj[k].(string); ok {
			parts = append(parts, text.OneLine(v, 0))
			delete(obj, k)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := obj[k].(type) {
		case string:
			parts = append(parts, k+"="+text.OneLine(v, 0))
		case float64, bool:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, " ")
}

// bookkeeping reports whether a tool only keeps the checklist, whose open
// items the record lists anyway: its dropped results are not indexed.
func bookkeeping(tool string) bool {
	return strings.HasPrefix(tool, "checklist_") || strings.HasPrefix(tool, "todo_")
}

func turnsOf(msgs []transcript.Message, base int, removed []int) []int {
	return record.Turns(msgs, base, removed...)
}

// facts is the facts part of a compaction's section and what it carries.
type facts struct {
	record  record.Record // cumulative, for Result.Record
	earlier Earlier
	dropped []DroppedLine
	humans  int // human messages removed
	// removedTurns are the turn numbers of the human messages removed.
	removedTurns []int
	text         string // the record, stubs and index parts; "" when all are empty
}

// buildFacts computes the facts of cutting in to the indexes keep, in
// being normalized (its messages the originals) and after the messages
// after the pure layers, one per message of in. With cut false only the
// record is updated (with the results the pure layers shrank) and no text
// is made.
func buildFacts(in Input, after []transcript.Message, keep map[int]bool, cut bool) facts {
	msgs := in.Messages
	turns := turnsOf(msgs, in.TurnBase, in.RemovedTurns)
	toks := messageTokens(in)
	shrunkNow := func(i int) bool { return i < len(after) && after[i].Text() != msgs[i].Text() }
	removed := func(i int) bool { return cut && !keep[i] }
	fresh := func(i int) bool { return !Shrunk(msgs[i].Text()) }
	var f facts
	if in.NoFacts {
		return f
	}
	f.record = in.Record.Merge(record.FromLog(msgs, in.TurnBase, func(i int) bool {
		return (removed(i) || shrunkNow(i)) && fresh(i)
	}, in.RemovedTurns...))
	if !cut {
		return f
	}
	f.record.Checklist = append([]string(nil), in.Reminders.Checklist...)
	shown := f.record.Merge(record.FromLog(msgs, in.TurnBase, func(i int) bool {
		return !removed(i) && !shrunkNow(i) && fresh(i)
	}, in.RemovedTurns...))

	var stubs, lines []string
	indexedHandles := map[string]bool{}
	for i, m := range msgs {
		if !removed(i) {
			continue
		}
		text := droppedText(m)
		what, tool := droppedWhat(msgs, i)
		d := DroppedLine{Handle: Handle(text), Role: m.Role, Tool: tool, What: what, Tokens: toks[i], Turn: turns[i], Text: text}
		if m.IsPlainUserText() {
			f.humans++
			f.removedTurns = append(f.removedTurns, turns[i])
			stubs = append(stubs, StubLine(m, turns[i]))
		} else if indexed(m, toks[i]) && !indexedHandles[d.Handle] {
			// The same text dropped twice (a file read again) is one line.
			indexedHandles[d.Handle] = true
			lines = append(lines, indexLine(d))
		}
		f.dropped = append(f.dropped, d)
	}
	reverseStrings(lines)
	f.earlier = carry(in.Earlier, stubs, lines)

	var parts []string
	if r := shown.Render(RecordTokens); r != "" {
		parts = append(parts, recordHeading+"\n"+recordLead+"\n\n"+r)
	}
	if s := stubPart(f.earlier); s != "" {
		parts = append(parts, wordsHeading+"\n"+wordsLead+"\n\n"+s)
	}
	if d := droppedPart(f.earlier); d != "" {
		parts = append(parts, droppedHeading+"\n"+droppedLead+"\n\n"+d)
	}
	f.text = strings.Join(parts, "\n\n")
	return f
}

// carry joins what earlier compactions left with this one's stubs (oldest
// first) and index lines (newest first), within the carry caps.
func carry(prev Earlier, stubs, lines []string) Earlier {
	out := Earlier{StubsOmitted: prev.StubsOmitted, DroppedOlder: prev.DroppedOlder}
	out.UserStubs = append(append([]string(nil), prev.UserStubs...), stubs...)
	if n := len(out.UserStubs); n > MaxCarriedStubs {
		cut := n - MaxCarriedStubs
		out.UserStubs = append(out.UserStubs[:stubHead:stubHead], out.UserStubs[stubHead+cut:]...)
		out.StubsOmitted += cut
	}
	out.Dropped = append(append([]string(nil), lines...), prev.Dropped...)
	if n := len(out.Dropped); n > droppedLines {
		out.DroppedOlder += n - droppedLines
		out.Dropped = out.Dropped[:droppedLines]
	}
	return out
}

// stubPart lists the carried stubs within stubLines: the oldest stubHead,
// a line counting the left-out ones, and the newest.
func stubPart(e Earlier) string {
	s := e.UserStubs
	omitted := e.StubsOmitted
	if len(s) > stubLines {
		omitted += len(s) - (stubLines - 1)
		s = append(s[:stubHead:stubHead], s[len(s)-(stubLines-1-stubHead):]...)
	}
	if len(s) == 0 {
		return ""
	}
	if omitted == 0 {
		return strings.Join(s, "\n")
	}
	head := min(stubHead, len(s))
	mid := fmt.Sprintf("- … %d more of the user's messages, between these", omitted)
	return strings.Join(append(append(append([]string(nil), s[:head]...), mid), s[head:]...), "\n")
}

// droppedPart lists the carried index lines and counts the older ones.
func droppedPart(e Earlier) string {
	if len(e.Dropped) == 0 && e.DroppedOlder == 0 {
		return ""
	}
	out := strings.Join(e.Dropped, "\n")
	if e.DroppedOlder > 0 {
		out += fmt.Sprintf("\n- … %d older dropped messages are not listed", e.DroppedOlder)
	}
	return strings.TrimPrefix(out, "\n")
}

func reverseStrings(xs []string) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// withFacts puts the facts part before a summary or memory section.
func withFacts(factsText, section string) string {
	if factsText == "" {
		return section
	}
	return factsText + "\n\n" + section
}

// LogRecord returns the work record of a log as a compaction's section
// shows it: rec (what earlier compactions recorded) merged with the facts
// of msgs that are not placeholders of results already recorded, numbered
// by turnBase and the removed turns (see record.Turns). The
// cycle hand-off uses it for the record it carries.
func LogRecord(rec record.Record, msgs []transcript.Message, turnBase int, removed []int) record.Record {
	return rec.Merge(record.FromLog(msgs, turnBase, func(i int) bool { return !Shrunk(msgs[i].Text()) }, removed...))
}
