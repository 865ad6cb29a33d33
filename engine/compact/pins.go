package compact

import (
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/transcript"
)

// Pinning rules (DESIGN §4).
const (
	// KeepRecent is the number of newest messages that are always kept.
	KeepRecent = 4
	// workingSetScan is the number of most recent working-set paths looked
	// for in messages.
	workingSetScan = 12
	// workingSetCap is the largest number of messages pinned because they
	// name a working-set path; the newest win.
	workingSetCap = 24
)

// Reasons a message is pinned, in the order they are listed on a message.
const (
	reasonRecent     = "recent"      // one of the last KeepRecent messages
	reasonWorkingSet = "working-set" // names a path of the working set
	reasonError      = "error"       // a failed tool call or an error message
	reasonPatch      = "patch"       // a file change or a diff
	reasonPair       = "pair"        // kept only as the call or result of a pinned message
	reasonUserText   = "user-text"   // the newest plain user text
	// reasonSeed keeps a cycle's [CYCLE STATE] seed, which carries the
	// user's words and the work record of the earlier cycles.
	reasonSeed = "seed"
	// reasonSkill keeps an activated skill's instructions (the result of
	// a skill tool call, see skill.Activations): the model follows them
	// for the rest of the session, so no layer clears or drops them.
	reasonSkill = "skill"
)

// reasonOrder fixes the order of reasons on one message.
var reasonOrder = []string{reasonRecent, reasonWorkingSet, reasonError, reasonPatch, reasonPair, reasonUserText, reasonUserWords, reasonSeed, reasonSkill}

// errorMarkers are looked for, case-insensitively, in message text.
var errorMarkers = []string{"error:", "failed", "panic", "traceback"}

// patchMarkers are looked for in message text and call arguments.
var patchMarkers = []string{"diff --git", "+++ b/"}

// writeTools change files; their calls and results are patch records.
var writeTools = []string{"write_file", "edit_file"}

// Pin says that the message at Index survives compaction verbatim, and why.
// A message pinned for several reasons has one Pin per reason.
type Pin struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

// maxPinnedShare bounds the working-set pins: when the pinned messages
// would take more than this share of the goal's room for messages (the
// threshold, or the target of an automatic compaction when it is lower,
// less the prefix), the oldest working-set
// paths stop pinning until they fit (or none is left). Without it a small
// window whose recent reads are all in the working set could pin more than
// compaction can ever free.
const maxPinnedShare = 0.5

// Pins returns the messages of in.Messages that compaction must keep, sorted
// by index and, for one index, in the order of the Reason constants. The set
// is closed under call/result pairing (a pinned result keeps its call and
// every sibling result, a pinned call keeps all its results), so the kept
// messages never hold an orphan, and it contains the newest plain user text
// when there is one. Working-set pins are trimmed, oldest path first, while
// the pinned tokens exceed maxPinnedShare of the threshold's room for
// messages. The human messages within [UserWordsBudget] are pinned as
// [reasonUserWords]; they have their own budget, so they are never trimmed
// and do not count against the working-set share.
func Pins(in Input) []Pin {
	pins := pinsFor(in)
	if in.Threshold <= 0 {
		return pins
	}
	budget := int(float64(max(goal(in)-in.PrefixTokens, 0)) * maxPinnedShare)
	ws := in.WorkingSet
	for len(ws) > 0 && workingSetTokens(in, pins) > budget {
		ws = ws[1:]
		trimmed := in
		trimmed.WorkingSet = ws
		pins = pinsFor(trimmed)
	}
	return pins
}

func pinsFor(in Input) []Pin {
	msgs := in.Messages
	reasons := make([]map[string]bool, len(msgs))
	add := func(i int, r string) {
		if reasons[i] == nil {
			reasons[i] = map[string]bool{}
		}
		reasons[i][r] = true
	}

	for i := max(0, len(msgs)-KeepRecent); i < len(msgs); i++ {
		add(i, reasonRecent)
	}

	paths := recentPaths(in.WorkingSet)
	pinnedForPath := 0
	for i := len(msgs) - 1; i >= 0 && pinnedForPath < workingSetCap && len(paths) > 0; i-- {
		if namesAnyPath(&msgs[i], paths) {
			add(i, reasonWorkingSet)
			pinnedForPath++
		}
	}

	for i := range msgs {
		if hasErrorMarker(&msgs[i]) {
			add(i, reasonError)
		}
		if hasPatchMarker(&msgs[i]) {
			add(i, reasonPatch)
		}
	}

	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].IsPlainUserText() {
			add(i, reasonUserText)
			break
		}
	}
	for i := range skill.Activations(msgs) {
		add(i, reasonSkill)
	}
	if !in.NoFacts {
		words, _ := userWords(msgs, UserWordsBudget(in))
		for _, i := range words {
			add(i, reasonUserWords)
		}
		for i := range msgs {
			if msgs[i].Kind == transcript.KindSeed {
				add(i, reasonSeed)
			}
		}
	}

	// Pairing: a message not pinned on its own whose call or result
	// partner is pinned is pinned too. Primary reasons never depend on
	// pairing and groups are symmetric, so one pass closes the set.
	primary := make([]bool, len(msgs))
	for i := range msgs {
		primary[i] = len(reasons[i]) > 0
	}
	g := groups(msgs)
	for i := range msgs {
		if !primary[i] {
			continue
		}
		for _, j := range g.members(i) {
			if !primary[j] {
				add(j, reasonPair)
			}
		}
	}

	var out []Pin
	for i, rs := range reasons {
		for _, r := range reasonOrder {
			if rs[r] {
				out = append(out, Pin{Index: i, Reason: r})
			}
		}
	}
	return out
}

// PinnedIndexes returns the distinct indexes of pins in ascending order.
func PinnedIndexes(pins []Pin) []int {
	out := make([]int, 0, len(pins))
	for _, p := range pins {
		out = append(out, p.Index)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PinnedTokens returns the tokens of the pinned messages of in, the figure
// [ShouldCompact] takes out of the level and the threshold.
func PinnedTokens(in Input, pins []Pin) int {
	toks := messageTokens(in)
	n := 0
	for _, i := range PinnedIndexes(pins) {
		if i >= 0 && i < len(toks) {
			n += toks[i]
		}
	}
	return n
}

// workingSetTokens is PinnedTokens without the older human messages
// pinned for the user's words, which have a budget of their own; the
// newest user text counts, as it always did.
func workingSetTokens(in Input, pins []Pin) int {
	words := map[int]bool{}
	var rest []Pin
	for _, p := range pins {
		if p.Reason == reasonUserWords {
			words[p.Index] = true
		}
	}
	for _, p := range pins {
		if p.Reason == reasonUserText {
			delete(words, p.Index)
		}
	}
	for _, p := range pins {
		if !words[p.Index] {
			rest = append(rest, p)
		}
	}
	return PinnedTokens(in, rest)
}

func pinnedSet(pins []Pin) map[int]bool {
	set := make(map[int]bool, len(pins))
	for _, p := range pins {
		set[p.Index] = true
	}
	return set
}

// recentPaths returns up to workingSetScan non-empty paths from the end of
// ws, newest first, without duplicates.
func recentPaths(ws []string) []string {
	var out []string
	for i := len(ws) - 1; i >= 0 && len(out) < workingSetScan; i-- {
		p := strings.TrimPrefix(strings.TrimSpace(ws[i]), "./")
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// namesAnyPath reports whether m mentions one of paths in its recorded
// paths, its text, or the arguments of its calls.
func namesAnyPath(m *transcript.Message, paths []string) bool {
	for _, p := range m.Paths {
		if slices.Contains(paths, strings.TrimPrefix(p, "./")) {
			return true
		}
	}
	texts := []string{m.Body(), m.Args}
	for _, c := range m.ToolCalls {
		texts = append(texts, c.Arguments)
	}
	for _, t := range texts {
		for _, p := range paths {
			if mentionsPath(t, p) {
				return true
			}
		}
	}
	return false
}

// mentionsPath reports whether text contains path as a whole path: not as
// the tail of a longer name ("data.go" does not mention "a.go") nor as the
// head of one ("a.go" is not mentioned by "a.gox"). A leading "./" and a
// sentence's full stop after the path are allowed.
func mentionsPath(text, path string) bool {
	for start := 0; start <= len(text)-len(path); {
		k := strings.Index(text[start:], path)
		if k < 0 {
			return false
		}
		i := start + k
		end := i + len(path)
		if boundaryBefore(text, i) && boundaryAfter(text, end) {
			return true
		}
		start = i + 1
	}
	return false
}

func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '/'
}

func boundaryBefore(s string, i int) bool {
	if i == 0 || !pathByte(s[i-1]) {
		return true
	}
	// "./path": the dot-slash is a prefix, not part of a longer name.
	return i >= 2 && s[i-2:i] == "./" && (i == 2 || !pathByte(s[i-3]))
}

func boundaryAfter(s string, end int) bool {
	if end == len(s) || !pathByte(s[end]) {
		return true
	}
	// A full stop ends a sentence when no path character follows it.
	return s[end] == '.' && (end+1 == len(s) || !pathByte(s[end+1]))
}

// scanned reports whether markers are looked for in m: engine bookkeeping
// (status bars, reminders, seeds, acknowledgements) never pins itself.
func scanned(m *transcript.Message) bool {
	switch m.Kind {
	case transcript.KindChat, transcript.KindDiagnostics, transcript.KindRepair:
		return true
	}
	return false
}

func hasErrorMarker(m *transcript.Message) bool {
	if !scanned(m) {
		return false
	}
	if m.Role == transcript.Tool && m.IsError {
		return true
	}
	lower := strings.ToLower(m.Body())
	for _, k := range errorMarkers {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

func hasPatchMarker(m *transcript.Message) bool {
	if !scanned(m) {
		return false
	}
	if m.Role == transcript.Tool && slices.Contains(writeTools, m.ToolName) {
		return true
	}
	texts := []string{m.Body()}
	for _, c := range m.ToolCalls {
		if slices.Contains(writeTools, c.Name) {
			return true
		}
		texts = append(texts, c.Arguments)
	}
	for _, t := range texts {
		for _, k := range patchMarkers {
			if strings.Contains(t, k) {
				return true
			}
		}
	}
	return false
}

// pairing groups each assistant message that calls tools with the results
// answering its calls.
type pairing struct {
	owner map[int]int   // message index → index of the assistant owning its group
	group map[int][]int // assistant index → the assistant and its results, ascending
}

// groups finds call/result groups. A result is matched to the nearest
// earlier assistant message that made the call; a result no call matches
// stays alone.
func groups(msgs []transcript.Message) pairing {
	p := pairing{owner: map[int]int{}, group: map[int][]int{}}
	callOwner := map[string]int{}
	for i, m := range msgs {
		switch m.Role {
		case transcript.Assistant:
			if len(m.ToolCalls) == 0 {
				continue
			}
			for _, c := range m.ToolCalls {
				callOwner[c.ID] = i
			}
			p.owner[i] = i
			p.group[i] = []int{i}
		case transcript.Tool:
			a, ok := callOwner[m.ToolCallID]
			if !ok {
				continue
			}
			p.owner[i] = a
			p.group[a] = append(p.group[a], i)
		}
	}
	return p
}

// members returns the indexes of i's group, i itself included.
func (p pairing) members(i int) []int {
	a, ok := p.owner[i]
	if !ok {
		return []int{i}
	}
	return p.group[a]
}
