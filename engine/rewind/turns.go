package rewind

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/storage"
)

// Turn is one message the user sent in the session.
type Turn struct {
	// N is the turn's number: 1-based over the whole session, across
	// cycles, and never reused, so a rewound turn keeps its number and the
	// next message after a rewind gets the next free one. It is the number
	// the app and the command line show and that plans, rewinds and
	// changes-since take.
	N int `json:"n"`
	// Cycle is the cycle the message was sent in.
	Cycle int `json:"cycle"`
	// LogIndex is the message's index in the current cycle's log, or -1
	// when the log no longer holds it (an earlier cycle, a compaction or
	// a rewind removed it).
	LogIndex int `json:"-"`
	// Text is what the user typed, without the engine's turn_meta block,
	// cut at TextLimit runes.
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// Superseded is set once a rewind to this turn or an earlier one has
	// taken the message out of the conversation.
	Superseded bool `json:"superseded,omitempty"`
	// SHA identifies the message in the log: a prefix of the SHA-256 of
	// its body.
	SHA string `json:"sha"`
}

// TextLimit bounds the text kept in a turn's record.
const TextLimit = 500

// The per-session state keys of the turn list and of the snapshot taken at
// the start of each turn.
const (
	turnsKey   = "turns"
	snapKeyFmt = "turn/%d"
)

// Snapshot is what a rewind of the conversation to a turn puts back: the
// checklist and the working set as they were right before the turn's
// message.
type Snapshot struct {
	Checklist  json.RawMessage `json:"checklist,omitempty"`
	WorkingSet []string        `json:"working_set,omitempty"`
}

func bodySHA(m *transcript.Message) string {
	h := sha256.Sum256([]byte(m.Body()))
	return hex.EncodeToString(h[:12])
}

// newTurn is the record of turn n, the user message m of cycle.
func newTurn(n, cycle int, m *transcript.Message) Turn {
	return Turn{N: n, Cycle: cycle, Text: text.Clip(m.Body(), TextLimit), Time: m.Time, SHA: bodySHA(m)}
}

// loadTurns reads session id's turn list. A session from before turns
// were recorded numbers the user messages of its current log from 1.
func loadTurns(st *storage.Store, id string, cycle int, entries []transcript.Entry) []Turn {
	var turns []Turn
	if data, err := st.State(id, turnsKey); err == nil && len(data) > 0 {
		if json.Unmarshal(data, &turns) != nil {
			turns = nil
		}
	}
	if len(turns) == 0 {
		for i := range entries {
			if m := &entries[i].Msg; m.IsPlainUserText() {
				turns = append(turns, newTurn(len(turns)+1, cycle, m))
			}
		}
	}
	return turns
}

// Number returns a copy of turns with each one's index in the log
// entries set (-1 when the log no longer holds it): each turn that is not
// superseded is matched with its message, in order.
func Number(turns []Turn, entries []transcript.Entry) []Turn {
	out := append([]Turn(nil), turns...)
	next := 0
	for k := range out {
		out[k].LogIndex = -1
		if out[k].Superseded {
			continue
		}
		for i := next; i < len(entries); i++ {
			m := &entries[i].Msg
			if m.IsPlainUserText() && m.Time.Equal(out[k].Time) && bodySHA(m) == out[k].SHA {
				out[k].LogIndex, next = i, i+1
				break
			}
		}
	}
	return out
}

// Next is the number of the next user message.
func (r *Session) Next() int {
	if n := len(r.turns); n > 0 {
		return r.turns[n-1].N + 1
	}
	return 1
}

// List returns the turn list as recorded, without log indexes (see
// Number); the caller may keep it.
func (r *Session) List() []Turn { return append([]Turn(nil), r.turns...) }

// Find returns turn n numbered against the log entries, or an error
// naming the turns there are.
func (r *Session) Find(n int, entries []transcript.Entry) (Turn, error) {
	turns := Number(r.turns, entries)
	for _, t := range turns {
		if t.N == n {
			return t, nil
		}
	}
	if len(turns) == 0 {
		return Turn{}, fmt.Errorf("session %s has no turns yet; there is nothing to rewind", r.id)
	}
	return Turn{}, fmt.Errorf("session %s has no turn %d; its turns are 1 to %d", r.id, n, turns[len(turns)-1].N)
}

// Begin adds turn n (its user message m, sent in cycle) to the list, with
// the snapshot of the checklist and working set taken before it, and
// returns the commit step that stores both and a function that takes the
// turn back when that commit fails. The list is changed at once, so that
// what the commit publishes holds the new turn.
func (r *Session) Begin(n, cycle int, m *transcript.Message, snap Snapshot) (store func(tx *storage.Tx) error, undo func()) {
	prev := r.turns
	turns := append(append([]Turn(nil), r.turns...), newTurn(n, cycle, m))
	r.turns = turns
	return func(tx *storage.Tx) error {
		if err := putJSON(tx, r.id, turnsKey, turns); err != nil {
			return err
		}
		return putJSON(tx, r.id, fmt.Sprintf(snapKeyFmt, n), snap)
	}, func() { r.turns = prev }
}

// Supersede marks turn n and every later one as taken out of the
// conversation, at once, and returns the commit step that stores the list
// and a function that puts the old list back when that commit fails.
func (r *Session) Supersede(n int) (store func(tx *storage.Tx) error, undo func()) {
	prev := r.turns
	turns := append([]Turn(nil), r.turns...)
	for i := range turns {
		if turns[i].N >= n {
			turns[i].Superseded = true
		}
	}
	r.turns = turns
	return func(tx *storage.Tx) error { return putJSON(tx, r.id, turnsKey, turns) }, func() { r.turns = prev }
}

// SnapshotOf returns the snapshot taken at the start of turn n, and
// whether one was recorded (an older Tally did not).
func (r *Session) SnapshotOf(n int) (Snapshot, bool) {
	var snap Snapshot
	data, err := r.store.State(r.id, fmt.Sprintf(snapKeyFmt, n))
	ok := err == nil && len(data) > 0 && json.Unmarshal(data, &snap) == nil
	return snap, ok
}

func putJSON(tx *storage.Tx, id, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.PutState(id, key, data)
}
