package cycle

import (
	"fmt"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
)

// Modes of a cycle restart.
const (
	ModeAuto   = "auto"   // the level reached the cycle threshold
	ModeManual = "manual" // the user asked for a new cycle
)

// SeedMarker opens the seed message of every cycle. Untrusted text can
// never contain it: transcript.Neutralize rewrites it.
const SeedMarker = "[CYCLE STATE]"

// Item is one checklist entry carried into the new cycle.
type Item = todo.Item

// State is the structured state a new cycle starts from.
type State struct {
	// Mode is ModeAuto or ModeManual.
	Mode string `json:"mode"`
	// Workspace is the workspace root.
	Workspace string `json:"workspace"`
	// Cycle is the number of the cycle being started, from 1.
	Cycle int `json:"cycle"`
	// Checklist is the task checklist in its order.
	Checklist []Item `json:"checklist,omitempty"`
	// WorkingSet lists recently touched paths, most recent last.
	WorkingSet []string `json:"working_set,omitempty"`
	// Brief is the hand-off brief from the previous cycle.
	Brief string `json:"brief,omitempty"`
	// Subagents lists, one line each, the sub-agents of the previous
	// cycle, whose reports are archived with it.
	Subagents []string `json:"subagents,omitempty"`
	// UserWords are the user's messages of the previous cycles, verbatim,
	// oldest first, as many as the budget allowed (see
	// compact.UserWords); UserStubs are one line each for the older ones,
	// with the handle that reads a message back whole.
	UserWords []string `json:"user_words,omitempty"`
	UserStubs []string `json:"user_stubs,omitempty"`
	// Record is the work record computed by Tally from the tool calls of
	// the previous cycles (see record.Record.Render).
	Record string `json:"record,omitempty"`
}

// Seed renders the first user message of a new cycle: the [CYCLE STATE]
// marker, why the cycle started, the checklist with [ ] / [~] / [x]
// markers, the working set and the brief inside <carry_forward>. The
// output depends only on s. Text that came from the model or files is
// neutralised so it cannot forge the marker or an engine tag, and the
// brief cannot close its own block.
func Seed(s State) string {
	var b strings.Builder
	b.WriteString(SeedMarker + "\n")
	switch s.Mode {
	case ModeManual:
		fmt.Fprintf(&b, "Cycle %d started at the user's request.", max(s.Cycle, 1))
	default:
		fmt.Fprintf(&b, "Cycle %d started because the context window was filling up.", max(s.Cycle, 1))
	}
	b.WriteString(" The earlier conversation is archived: it is not shown here, and the recall_archive tool searches it when you need an exact detail.\n")
	if s.Workspace != "" {
		fmt.Fprintf(&b, "\nWorkspace: %s\n", clean(s.Workspace))
	}

	b.WriteString("\nChecklist:\n")
	if len(s.Checklist) == 0 {
		b.WriteString("(empty)\n")
	}
	for _, it := range s.Checklist {
		fmt.Fprintf(&b, "%s %s. %s\n", marker(it.Status), clean(it.ID), clean(it.Content))
	}

	b.WriteString("\nWorking set (most recent last):\n")
	if len(s.WorkingSet) == 0 {
		b.WriteString("(none)\n")
	}
	for _, p := range s.WorkingSet {
		fmt.Fprintf(&b, "- %s\n", clean(p))
	}

	if len(s.Subagents) > 0 {
		b.WriteString("\nSub-agents of the previous cycle (their reports are archived; do not delegate these jobs again unless something changed):\n")
		for _, l := range s.Subagents {
			fmt.Fprintf(&b, "%s\n", clean(l))
		}
	}

	if len(s.UserWords) > 0 || len(s.UserStubs) > 0 {
		b.WriteString("\nWhat the user said in earlier cycles (facts: their own words, oldest first):\n")
		for _, l := range s.UserStubs {
			fmt.Fprintf(&b, "%s\n", clean(l))
		}
		for _, w := range s.UserWords {
			b.WriteString(carryOpen + "\n" + escapeCarry(transcript.Neutralize(strings.TrimSpace(w))) + "\n" + carryClose + "\n")
		}
		if len(s.UserStubs) > 0 {
			b.WriteString("(A line with a #handle is an older message cut to its first words; retrieve_tool_result with the handle reads it whole.)\n")
		}
	}
	if strings.TrimSpace(s.Record) != "" {
		b.WriteString("\nRecord of earlier work (facts computed by Tally from the tool calls, not the model's words):\n")
		b.WriteString(escapeCarry(transcript.Neutralize(strings.TrimSpace(s.Record))) + "\n")
	}

	b.WriteString("\nHand-off brief from the previous cycle (the model's own paraphrase; check details in the archive):\n")
	brief := strings.TrimSpace(s.Brief)
	if brief == "" {
		brief = "(no brief was written)"
	}
	b.WriteString(carryOpen + "\n" + escapeCarry(transcript.Neutralize(brief)) + "\n" + carryClose + "\n")
	return b.String()
}

// marker renders a checklist status.
func marker(s todo.Status) string {
	switch s {
	case todo.Completed:
		return "[x]"
	case todo.InProgress:
		return "[~]"
	default:
		return "[ ]"
	}
}

// clean puts untrusted text on one line and neutralises engine tags.
func clean(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(strings.TrimSpace(s))
	return escapeCarry(transcript.Neutralize(s))
}

// escapeCarry keeps text from opening or closing a <carry_forward> block.
func escapeCarry(s string) string {
	return strings.NewReplacer(carryOpen, "‹carry_forward>", carryClose, "‹/carry_forward>").Replace(s)
}

// Ack returns the synthetic assistant reply that follows the seed, so the
// new cycle continues with a normal user/assistant alternation.
func Ack(cycle int) string {
	return fmt.Sprintf("Understood: cycle %d continues from the checklist, working set and brief above; I will check the archive before relying on details that are not there.", max(cycle, 1))
}

// Messages returns the opening of a new cycle: the seed as an engine user
// message of kind KindSeed and the acknowledgement as an assistant message
// of kind KindAck, both stamped at.
func Messages(s State, at time.Time) []transcript.Message {
	seed := transcript.Injected(transcript.KindSeed, Seed(s), at)
	ack := transcript.Message{
		Role: transcript.Assistant, Kind: transcript.KindAck, Time: at,
		Blocks: []transcript.Block{{Type: transcript.BlockText, Text: Ack(s.Cycle)}},
	}
	return []transcript.Message{seed, ack}
}
