package compact

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/record"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// Re-injection limits (DESIGN §4).
const (
	// maxReadPreviews is how many of the latest file reads are previewed.
	maxReadPreviews = 12
	// readPreviewChars is the length of one file-read preview in runes.
	readPreviewChars = 1_200
	// defaultReminderBudget caps the tokens of all reminders together.
	defaultReminderBudget = 6_000
	// minReminderBudget is the smallest budget a target leaves the
	// reminders (see [Input.Target]): room for the checklist and the
	// working set, not for file previews.
	minReminderBudget = 500
)

// Tags that wrap re-injected state.
const (
	reminderOpen  = "<system-reminder>"
	reminderClose = "</system-reminder>"
)

// FileRead is a file the agent read before compaction, with the text the
// read returned.
type FileRead struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// ReminderInputs is the state re-injected after the history was cut.
type ReminderInputs struct {
	// Checklist holds the active checklist items, one rendered line each.
	Checklist []string `json:"checklist,omitempty"`
	// WorkingSet lists the recently touched paths, most recent last.
	WorkingSet []string `json:"working_set,omitempty"`
	// Reads are the latest file reads, most recent last; only the last
	// maxReadPreviews are previewed.
	Reads []FileRead `json:"reads,omitempty"`
	// At stamps the reminder messages.
	At time.Time `json:"at,omitzero"`
}

// Result is the outcome of a compaction, ready for the log's Rebuild.
type Result struct {
	// Messages is the new log: the pinned messages in their original order
	// followed by the reminders when the history was cut, or every message
	// after the pure layers when it was not.
	Messages []transcript.Message `json:"-"`
	// SummarySection is the text to merge into the system prompt, or ""
	// when the history was not cut. It is the one prefix change of a
	// compaction; it never travels as a message.
	SummarySection string `json:"summary_section,omitempty"`
	// Source is LayerSummary, LayerMemory, or "" when only the pure layers
	// applied.
	Source       string `json:"source,omitempty"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	// Record is Input.Record merged with the record of the messages this
	// compaction removed or whose results the pure layers shrank: the
	// agent stores it and passes it as the next Input.Record (and renders
	// it into the cycle hand-off). Its checklist is the open checklist of
	// Input.Reminders when the history was cut.
	Record record.Record `json:"record,omitzero"`
	// Earlier is what the next compaction carries (see [Input.Earlier]).
	Earlier Earlier `json:"earlier,omitzero"`
	// TurnBase is the Input.TurnBase of the next compaction: this one's
	// plus the human messages it removed.
	TurnBase int `json:"turn_base,omitempty"`
	// RemovedTurns is the Input.RemovedTurns of the next compaction:
	// this one's and the turns of the human messages it removed.
	RemovedTurns []int `json:"removed_turns,omitempty"`
	// Dropped lists every message the cut removed, oldest first, with the
	// text its handle names. The agent stores each Text as a blob in the
	// rebuild's transaction so the handles of the section resolve.
	Dropped []DroppedLine `json:"dropped,omitempty"`
	// SummaryRejected is set when the model's summary, with the facts and
	// reminders it brings, was no smaller than the messages it would have
	// replaced: the summary was not used and only the pure layers applied.
	SummaryRejected bool `json:"summary_rejected,omitempty"`
}

// Apply turns a plan and the model's summary into the new history. When the
// plan needs a summary and one is given, or the memory file stands in for
// it, the history is cut to the pinned messages and the reminders of
// in.Reminders are appended; otherwise only the pure layers' rewrites apply
// (an empty summary therefore never loses history). The result passes
// transcript.CheckPairing and keeps a plain user text whenever in did. A
// plan that was not made from in is re-planned first.
func Apply(in Input, plan Plan, summary string) Result {
	in = normalized(in)
	if len(plan.Messages) != len(in.Messages) || len(plan.Tokens) != len(plan.Messages) {
		plan = PlanCascade(in)
	}
	res := Result{TokensBefore: plan.TokensBefore, Messages: plan.Messages, TokensAfter: plan.PureTokensAfter,
		Record: in.Record, Earlier: in.Earlier, TurnBase: in.TurnBase, RemovedTurns: slices.Clone(in.RemovedTurns)}
	pure := func() Result {
		res.Record = buildFacts(in, plan.Messages, nil, false).record
		return res
	}
	var section string
	switch {
	case plan.SummarySource == LayerMemory && strings.TrimSpace(plan.Summary) != "":
		section, res.Source = MemorySection(plan.Summary), LayerMemory
	case plan.NeedsSummary && strings.TrimSpace(summary) != "":
		section, res.Source = SummarySection(CapSummary(summary)), LayerSummary
	default:
		return pure()
	}
	keep := make(map[int]bool, len(plan.Keep))
	for _, i := range plan.Keep {
		keep[i] = true
	}
	f := buildFacts(in, plan.Messages, keep, true)
	section = withFacts(f.text, section)
	var kept []transcript.Message
	level := plan.PureTokensAfter
	var text strings.Builder
	text.WriteString(section)
	removed := 0
	for i, m := range plan.Messages {
		if keep[i] {
			kept = append(kept, m)
			text.WriteString(m.Text())
		} else {
			removed += plan.Tokens[i]
		}
	}
	if transcript.CheckPairing(kept) != nil && transcript.CheckPairing(plan.Messages) == nil {
		// The pins should make this impossible; never trade a valid log
		// for an invalid one.
		return pure()
	}
	budget := plan.ReminderBudget
	if budget <= 0 {
		budget = reminderBudget(in)
	}
	rem := Reminders(in.Reminders, text.String(), budget)
	added := tokens.Count(section)
	for _, m := range rem {
		added += MessageTokens(m)
	}
	if res.Source == LayerSummary && removed <= added {
		// A summary no shorter than what it replaces (a weak model
		// writing up to its limit about a short history) would grow the
		// context: keep the history and say so.
		res.SummaryRejected = true
		res.Source = ""
		return pure()
	}
	res.Messages = insertReminders(kept, rem)
	res.SummarySection = section
	res.Record, res.Earlier, res.Dropped = f.record, f.earlier, f.dropped
	res.TurnBase += f.humans
	res.RemovedTurns = append(res.RemovedTurns, f.removedTurns...)
	res.TokensAfter = level - in.scaled(removed-added)
	return res
}

// insertReminders appends rem to msgs, or places it before a trailing
// assistant message whose calls are still unanswered so no call is split
// from its results.
func insertReminders(msgs, rem []transcript.Message) []transcript.Message {
	out := append([]transcript.Message(nil), msgs...)
	if len(rem) == 0 {
		return out
	}
	at := len(out)
	if len(transcript.Unanswered(out)) > 0 {
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].Role == transcript.Assistant {
				at = i
				break
			}
		}
	}
	return append(out[:at:at], append(rem, out[at:]...)...)
}

// Reminders builds the <system-reminder> messages re-injected after a
// compaction: the active checklist, the working set, and previews of the
// latest file reads (see latestReads). A reminder whose text (for a preview, the previewed
// file text) already appears verbatim in transcript is left out, and so is
// one that would overrun budget tokens; the last reminder then says what was
// left out for lack of room. Text from files and the checklist is
// neutralised so it cannot close the reminder tag.
func Reminders(items ReminderInputs, transcriptText string, budget int) []transcript.Message {
	type candidate struct{ name, text, probe string }
	var cands []candidate
	if lines := nonEmpty(items.Checklist); len(lines) > 0 {
		body := "The checklist after compaction:\n" + strings.Join(lines, "\n")
		cands = append(cands, candidate{"the checklist", wrapReminder(body), body})
	}
	if paths := nonEmpty(items.WorkingSet); len(paths) > 0 {
		body := "Files in the working set, most recent last:\n- " + strings.Join(paths, "\n- ")
		cands = append(cands, candidate{"the working set", wrapReminder(body), body})
	}
	for _, r := range latestReads(items.Reads) {
		preview := cutRunes(r.Text, readPreviewChars)
		if strings.TrimSpace(preview) == "" {
			continue
		}
		head := fmt.Sprintf("Preview of %s as read before compaction", transcript.Neutralize(r.Path))
		if len(preview) < len(r.Text) {
			head += fmt.Sprintf(" (first %s of %s chars)", text.Thousands(readPreviewChars), text.Thousands(utf8.RuneCountInString(r.Text)))
		}
		head += "; read_file shows its current content:\n"
		cands = append(cands, candidate{"the preview of " + r.Path, wrapReminder(head + transcript.Neutralize(preview)), preview})
	}

	var out []transcript.Message
	var left []string
	used := 0
	for _, c := range cands {
		if strings.Contains(transcriptText, c.probe) {
			continue
		}
		cost := tokens.MessageOverhead + tokens.Count(c.text)
		if used+cost > budget {
			left = append(left, c.name)
			continue
		}
		used += cost
		out = append(out, transcript.Injected(transcript.KindReminder, c.text, items.At))
	}
	if len(left) == 0 {
		return out
	}
	note := "Left out to stay within the context budget: " + transcript.Neutralize(strings.Join(left, ", ")) +
		". Read the files again or list the checklist if you need them."
	if len(out) == 0 {
		return []transcript.Message{transcript.Injected(transcript.KindReminder, wrapReminder(note), items.At)}
	}
	last := &out[len(out)-1]
	body := strings.TrimSuffix(last.Blocks[0].Text, "\n"+reminderClose)
	last.Blocks = []transcript.Block{{Type: transcript.BlockText, Text: body + "\n\n" + note + "\n" + reminderClose}}
	return out
}

// latestReads returns the reads to preview, oldest first: the newest read
// of each of the last maxReadPreviews paths read, leaving out reads whose
// text is already a placeholder of an earlier compaction. An older read of
// a path read again would only repeat it.
func latestReads(reads []FileRead) []FileRead {
	seen := map[string]bool{}
	var out []FileRead
	for i := len(reads) - 1; i >= 0 && len(out) < maxReadPreviews; i-- {
		r := reads[i]
		if seen[r.Path] || Shrunk(r.Text) {
			continue
		}
		seen[r.Path] = true
		out = append(out, r)
	}
	slices.Reverse(out)
	return out
}

func wrapReminder(body string) string {
	return reminderOpen + "\n" + transcript.Neutralize(body) + "\n" + reminderClose
}

func nonEmpty(xs []string) []string {
	var out []string
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			out = append(out, x)
		}
	}
	return out
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// CapSummary returns summary trimmed and cut to at most [SummaryTokens]
// tokens, with a note at the cut.
func CapSummary(summary string) string {
	return cutTokens(strings.TrimSpace(summary), SummaryTokens, "\n[summary cut at "+text.Thousands(SummaryTokens)+" tokens]")
}

// cutTokens returns s when it has at most limit tokens, and otherwise the
// longest prefix that, with note appended, stays within limit.
func cutTokens(s string, limit int, note string) string {
	if tokens.Count(s) <= limit {
		return s
	}
	room := limit - tokens.Count(note)
	if room <= 0 {
		return strings.TrimSpace(note)
	}
	lo, hi := 0, len(s) // the prefix of length lo fits
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		for mid < len(s) && !utf8.RuneStart(s[mid]) {
			mid++
		}
		if mid > hi {
			break
		}
		if tokens.Count(s[:mid]) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.TrimRight(s[:lo], " \n") + note
}
