package rewind

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// TurnsIn reads session id's turns inside tx, numbered against entries
// (the current cycle's log, see Number). A session from before turns were
// recorded numbers the user messages of entries from 1, as Open does.
func TurnsIn(tx *storage.Tx, id string, cycle int, entries []transcript.Entry) ([]Turn, error) {
	var turns []Turn
	data, err := tx.State(id, turnsKey)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 && json.Unmarshal(data, &turns) != nil {
		turns = nil
	}
	if len(turns) == 0 {
		for i := range entries {
			if m := &entries[i].Msg; m.IsPlainUserText() {
				turns = append(turns, newTurn(len(turns)+1, cycle, m))
			}
		}
	}
	return Number(turns, entries), nil
}

// SnapshotIn returns the snapshot taken at the start of turn n of session
// id, read inside tx, and whether one was recorded.
func SnapshotIn(tx *storage.Tx, id string, n int) (Snapshot, bool, error) {
	var snap Snapshot
	data, err := tx.State(id, fmt.Sprintf(snapKeyFmt, n))
	if err != nil {
		return snap, false, err
	}
	ok := len(data) > 0 && json.Unmarshal(data, &snap) == nil
	return snap, ok, nil
}

// CopyTurns stores, inside tx, the turns of turns numbered up to n as the
// turn list of session to, each with the snapshot it started with in
// session from, so that the copy numbers its next message n+1 and can be
// rewound to each of them in its conversation.
func CopyTurns(tx *storage.Tx, from, to string, turns []Turn, n int) error {
	var kept []Turn
	for _, t := range turns {
		if t.N > n {
			continue
		}
		kept = append(kept, t)
		data, err := tx.State(from, fmt.Sprintf(snapKeyFmt, t.N))
		if err != nil {
			return err
		}
		if len(data) > 0 {
			if err := tx.PutState(to, fmt.Sprintf(snapKeyFmt, t.N), data); err != nil {
				return err
			}
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return putJSON(tx, to, turnsKey, kept)
}
