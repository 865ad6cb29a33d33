package agent

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
	// the app and the command line show and that RewindPlan, Rewind and
	// ChangesSince take.
	N int `json:"n"`
	// Cycle is the cycle the message was sent in.
	Cycle int `json:"cycle"`
	// LogIndex is the message's index in Messages (the current cycle's
	// log), or -1 when the log no longer holds it (an earlier cycle, a
	// compaction or a rewind removed it).
	LogIndex int `json:"-"`
	// Text is what the user typed, without the engine's turn_meta block,
	// cut at turnTextLimit runes.
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// Superseded is set once a rewind to this turn or an earlier one has
	// taken the message out of the conversation.
	Superseded bool `json:"superseded,omitempty"`
	// SHA identifies the message in the log: a prefix of the SHA-256 of
	// its body.
	SHA string `json:"sha"`
}

// turnTextLimit bounds the text kept in a turn's record.
const turnTextLimit = 500

// The per-session state keys of the turn list and of the snapshot taken at
// the start of each turn.
const (
	turnsKey       = "turns"
	turnSnapKeyFmt = "turn/%d"
)

// turnSnap is what a chat rewind to a turn puts back: the checklist and the
// working set as they were right before the turn's message.
type turnSnap struct {
	Checklist  json.RawMessage `json:"checklist,omitempty"`
	WorkingSet []string        `json:"working_set,omitempty"`
}

func bodySHA(m *transcript.Message) string {
	h := sha256.Sum256([]byte(m.Body()))
	return hex.EncodeToString(h[:12])
}

// loadTurns reads the session's turn list. A session from before turns
// were recorded numbers the user messages of its current log from 1.
func (s *Session) loadTurns() {
	var turns []Turn
	if data, err := s.cfg.Store.State(s.meta.ID, turnsKey); err == nil && len(data) > 0 {
		if json.Unmarshal(data, &turns) != nil {
			turns = nil
		}
	}
	if len(turns) == 0 {
		for i := 0; i < s.log.Len(); i++ {
			m := &s.log.At(i).Msg
			if m.IsPlainUserText() {
				turns = append(turns, Turn{N: len(turns) + 1, Cycle: s.meta.Cycle, Text: text.Clip(m.Body(), turnTextLimit), Time: m.Time, SHA: bodySHA(m)})
			}
		}
	}
	s.turns = turns
}

// nextTurn is the number of the next user message.
func (s *Session) nextTurn() int {
	if n := len(s.turns); n > 0 {
		return s.turns[n-1].N + 1
	}
	return 1
}

// Turns returns every message the user sent in the session, oldest first,
// with its number and where the current log holds it (see Turn). It waits
// for a running turn.
func (s *Session) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turnsLocked()
}

// turnsLocked is Turns for a caller holding s.mu: it matches each turn
// that is not superseded with its message in the log, in order.
func (s *Session) turnsLocked() []Turn { return numberTurns(s.turns, s.log.Entries()) }

// numberTurns returns a copy of turns with each one's index in the log
// entries set (-1 when the log no longer holds it).
func numberTurns(turns []Turn, entries []transcript.Entry) []Turn {
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

// turnFor returns turn n, or an error naming the turns there are.
func (s *Session) turnFor(n int) (Turn, error) {
	turns := s.turnsLocked()
	for _, t := range turns {
		if t.N == n {
			return t, nil
		}
	}
	if len(turns) == 0 {
		return Turn{}, fmt.Errorf("session %s has no turns yet; there is nothing to rewind", s.meta.ID)
	}
	return Turn{}, fmt.Errorf("session %s has no turn %d; its turns are 1 to %d", s.meta.ID, n, turns[len(turns)-1].N)
}

// beginTurnRecord returns the commit step that records turn n (its user
// message m) with the snapshot of the checklist and working set taken
// before it, and the turn list to adopt once the commit succeeded.
func (s *Session) beginTurnRecord(n int, m *transcript.Message, snap turnSnap) (func(tx *storage.Tx) error, []Turn) {
	turns := append(append([]Turn(nil), s.turns...), Turn{N: n, Cycle: s.meta.Cycle, Text: text.Clip(m.Body(), turnTextLimit), Time: m.Time, SHA: bodySHA(m)})
	return func(tx *storage.Tx) error {
		if err := putJSON(tx, s.meta.ID, turnsKey, turns); err != nil {
			return err
		}
		return putJSON(tx, s.meta.ID, fmt.Sprintf(turnSnapKeyFmt, n), snap)
	}, turns
}

// snapshot captures the checklist and working set now, for a later
// rewind to the turn about to start.
func (s *Session) snapshot() turnSnap {
	data, _ := s.checklist.MarshalJSON()
	return turnSnap{Checklist: data, WorkingSet: append([]string(nil), s.st.WorkingSet.Paths...)}
}

func putJSON(tx *storage.Tx, id, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.PutState(id, key, data)
}
