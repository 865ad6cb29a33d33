package transcript

// A cycle's history: every message the cycle's log ever held, in the
// order they were appended, with the rewrites of the log where they
// happened. The chat of a reopened session, the exports and the search
// index all lay a cycle out by this one rule.

// Rewrite is one rebuild of a cycle's log: its record and the messages it
// removed or changed (with their index in the log before it).
type Rewrite struct {
	Record RebuildRecord
	Gone   []Superseded
}

// Step is one line of a cycle's history: the row of a rewrite, or a
// message.
type Step struct {
	// Rewrite is the index (in History's rewrites) of the rewrite this
	// step is the row of; -1 for a message.
	Rewrite int
	// Msg is the message of a message step.
	Msg Message
	// GoneBy is the index of the rewrite that removed or changed the
	// message; -1 while the log holds it as it was appended.
	GoneBy int
	// WrittenBy is the index of the rewrite that wrote the message (a
	// summary, a cleared result, a new cycle's seed); -1 for a message the
	// conversation appended.
	WrittenBy int
	// LogIndex is the message's index in the current log; -1 when the
	// log no longer holds it.
	LogIndex int
}

// History lays out one cycle: rewrites are the rebuilds of the cycle's
// log, oldest first (a new cycle's start, if any, first), and live is the
// log as it stands. Each rewrite's row follows the messages appended
// before it; the messages it wrote follow its row; the messages it
// removed stay where they were appended, marked with GoneBy. ok is false,
// with no steps, when a record lacks From (an older Tally's) or does not
// fit the logs around it; the caller then falls back to a plainer layout.
func History(rewrites []Rewrite, live []Message) (steps []Step, ok bool) {
	logs, ok := versions(rewrites, live)
	if !ok {
		return nil, false
	}
	var cur []int // the step of each message of the log as it stands
	add := func(m Message, by int) int {
		steps = append(steps, Step{Rewrite: -1, Msg: m, GoneBy: -1, WrittenBy: by, LogIndex: -1})
		return len(steps) - 1
	}
	for _, m := range logs[0] {
		cur = append(cur, add(m, -1))
	}
	for i, r := range rewrites {
		steps = append(steps, Step{Rewrite: i, GoneBy: -1, WrittenBy: -1, LogIndex: -1})
		for _, g := range r.Gone {
			steps[cur[g.Index]].GoneBy = i
		}
		next := make([]int, 0, len(logs[i+1]))
		for k, m := range logs[i+1] {
			switch {
			case k < len(r.Record.From) && r.Record.From[k] >= 0:
				next = append(next, cur[r.Record.From[k]])
			case k < len(r.Record.From):
				next = append(next, add(m, i))
			default:
				next = append(next, add(m, -1))
			}
		}
		cur = next
	}
	for k, at := range cur {
		steps[at].LogIndex = k
	}
	return steps, true
}

// versions gives back the log as it stood before each rewrite, from the
// last one back: logs[i] is the log rewrite i rewrote, logs[len] live.
func versions(rewrites []Rewrite, live []Message) ([][]Message, bool) {
	logs := make([][]Message, len(rewrites)+1)
	logs[len(rewrites)] = live
	for i := len(rewrites) - 1; i >= 0; i-- {
		rec := rewrites[i].Record
		after := logs[i+1]
		if rec.From == nil || len(rec.From) != rec.AfterLen || rec.AfterLen > len(after) {
			return nil, false
		}
		if rec.Start {
			if i != 0 || len(rewrites[i].Gone) > 0 {
				return nil, false
			}
			continue // the cycle's log begins here
		}
		before := make([]Message, rec.BeforeLen)
		filled := make([]bool, rec.BeforeLen)
		put := func(at int, m Message) bool {
			if at < 0 || at >= len(before) || filled[at] {
				return false
			}
			before[at], filled[at] = m, true
			return true
		}
		for _, g := range rewrites[i].Gone {
			if !put(g.Index, g.Message) {
				return nil, false
			}
		}
		for k, at := range rec.From {
			if at >= 0 && !put(at, after[k]) {
				return nil, false
			}
		}
		for _, f := range filled {
			if !f {
				return nil, false
			}
		}
		logs[i] = before
	}
	return logs, true
}

// FirstDifference returns the index of the first message in which a and b
// differ (role, kind, text, tool calls or the call a result answers), the
// length of the shorter one when it is a prefix of the other, or -1 when
// they are equal: where a rewrite of the log starts to cost cache misses.
func FirstDifference(a, b []Message) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		x, y := &a[i], &b[i]
		if x.Role != y.Role || x.Kind != y.Kind || x.ToolCallID != y.ToolCallID || len(x.ToolCalls) != len(y.ToolCalls) || x.Text() != y.Text() {
			return i
		}
		for k := range x.ToolCalls {
			if x.ToolCalls[k] != y.ToolCalls[k] {
				return i
			}
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
