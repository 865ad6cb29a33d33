package status

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Placement is where a session's status block goes.
type Placement string

// The placements.
const (
	// Tail renders a fresh block at the tail of every request, outside
	// the log.
	Tail Placement = "tail"
	// Append appends each request's block to the log.
	Append Placement = "append"
	// OnChange appends a block to the log only when the state changed
	// materially since the last one (phase, goals, progress, alerts,
	// folder or branch); between changes the request carries no new
	// block, so the bytes sent stay a pure extension of the last request.
	// A block may be a delta of the last one (see RenderDelta).
	OnChange Placement = "on-change"
	// Off sends no status block at all: the requests carry the log
	// alone. It is for measuring what the block is worth (tally run
	// --status-mode off); Settings does not offer it.
	Off Placement = "off"
)

// DefaultPlacement is the placement measured cheapest for a provider
// whose cache works in units (unitRule) or by the longest common prefix:
// OnChange under both rules on the long scripted session.
func DefaultPlacement(unitRule bool) Placement { return OnChange }

// FullEvery is how many delta blocks may follow a full one in the
// OnChange placement before the next block is full again.
const FullEvery = 8

// Record is the audit record of the status sent with one request: the
// exact text and the canonical state it was rendered from.
type Record struct {
	Request int       `json:"request"`
	Mode    Placement `json:"mode"`
	Text    string    `json:"text"`
	State   State     `json:"state"`
	// Base is the state of the block this one is a delta of (OnChange
	// placement); nil for a full block.
	Base *State `json:"base,omitempty"`
}

// Kept is what a session keeps of its status blocks across requests and
// reopenings: the state_version of the last one rendered, the state of
// the last one appended to the log (Append and OnChange placements) and
// the delta blocks since the last full one. A session stores it with its
// state.
type Kept struct {
	StatusVersion int64  `json:"status_version"`
	LastStatus    *State `json:"last_status,omitempty"`
	StatusDeltas  int    `json:"status_deltas,omitempty"`
}

// Next renders the status block of request (its number) from st, placed
// by mode, and returns it with its audit record; it advances the
// state_version. In the OnChange placement the block is a delta of the
// last one when delta is allowed (the default renderer), that block is
// still in the log (lastInLog) and fewer than FullEvery deltas followed
// the last full block. r renders a full block.
func (k *Kept) Next(st State, request int, mode Placement, r Renderer, delta, lastInLog bool) Record {
	k.StatusVersion++
	st.Version = k.StatusVersion
	rec := Record{Request: request, Mode: mode, State: st}
	if mode == OnChange && delta && k.LastStatus != nil && k.StatusDeltas < FullEvery-1 && lastInLog {
		base := *k.LastStatus
		if text, err := RenderDelta(base, st); err == nil {
			rec.Text, rec.Base = text, &base
			k.StatusDeltas++
			return rec
		}
	}
	rec.Text = Slot(r, st)
	k.StatusDeltas = 0
	return rec
}

// Changed reports whether an OnChange session must append a status block
// before the next request, whose state is cur: when no block of the
// session is in the log any more (lastInLog false: a new session, a
// compaction or a cycle dropped it), or when the state differs materially
// from the last block's — its phase, goals, progress, alerts, folder or
// branch — except a checklist change the model has just seen (seenList:
// its own checklist call made it, in a turn that already has a block,
// and the call's result showed the list as it now is). Budget counts
// alone do not count (the phase turns to wrap_up when steps run low), so
// the counts a block shows are those of the request it was appended for.
func (k *Kept) Changed(cur State, lastInLog, seenList bool) bool {
	last := k.LastStatus
	if last == nil || !lastInLog {
		return true
	}
	if sameMaterial(*last, cur) {
		return false
	}
	goalsOnly := *last
	goalsOnly.Goals, goalsOnly.Done, goalsOnly.Phase = cur.Goals, cur.Done, cur.Phase
	return !(seenList && sameMaterial(goalsOnly, cur))
}

// InLog reports whether log still holds the last block appended to it:
// its newest status block is the one rendered from LastStatus.
func (k *Kept) InLog(log *transcript.AppendLog) bool {
	if k.LastStatus == nil {
		return false
	}
	want := k.LastStatus.Version
	for i := log.Len() - 1; i >= 0; i-- {
		m := &log.At(i).Msg
		if m.Kind != transcript.KindStatus {
			continue
		}
		v, ok := Version(m.Text())
		return ok && v == want
	}
	return false
}

// sameMaterial compares two states on what the model acts on. Budget
// counts are not compared: running low on steps changes the phase to
// wrap_up, which is.
func sameMaterial(a, b State) bool {
	return a.Phase == b.Phase && a.Done == b.Done && a.Cwd == b.Cwd && a.Branch == b.Branch &&
		slices.Equal(a.Goals, b.Goals) && slices.Equal(a.Alerts, b.Alerts) && slices.Equal(a.Roots, b.Roots)
}

// Audit is the result of re-rendering recorded status blocks.
type Audit struct {
	Checked    int      `json:"checked"`
	Mismatches []string `json:"mismatches,omitempty"`
	Last       string   `json:"last,omitempty"` // the last status text sent
}

// AuditRecords re-renders every recorded status (each a stored Record,
// oldest first) from its recorded canonical state, full blocks with r,
// and reports any that differ from the text that was sent.
func AuditRecords(r Renderer, records []storage.Record) Audit {
	var a Audit
	for _, rec := range records {
		var sr Record
		if err := json.Unmarshal(rec.Data, &sr); err != nil {
			a.Mismatches = append(a.Mismatches, fmt.Sprintf("record %d is unreadable: %v", rec.Seq, err))
			continue
		}
		a.Checked++
		a.Last = sr.Text
		if sr.Base != nil {
			if want, err := RenderDelta(*sr.Base, sr.State); err != nil || want != sr.Text {
				a.Mismatches = append(a.Mismatches, fmt.Sprintf("request %d: the delta block disagrees with its recorded states", sr.Request))
			}
			continue
		}
		if err := Verify(r, sr.Text, sr.State); err != nil {
			a.Mismatches = append(a.Mismatches, fmt.Sprintf("request %d: %v", sr.Request, err))
		}
	}
	return a
}
