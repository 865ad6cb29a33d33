// Package fork starts a new session from a turn of a stored one. The fork's
// history is the parent's, byte for byte, up to the end of that turn: the
// stored messages of the parent's current cycle are copied as they were
// encoded, with the system prompt (base, compaction summary and what the
// cycle carries), the model, profile, skills, permission mode and reasoning
// effort, so the fork's first request starts with the bytes of the parent's
// request at that point and the provider's prefix cache still serves them.
// The checklist and the working set are those the parent had when the turn
// ended; the earlier cycles' logs and archives come along for
// recall_archive. What the parent spent (its ledger), its status audit, its
// rebuild records and its sub-agents' transcripts stay with the parent.
//
// A turn can be forked from while its message is still in the parent's
// current log: a turn of an earlier cycle, one a compaction took out, or one
// a rewind superseded is refused with a one-sentence error, since the
// prompt the parent sent then is no longer stored. Files are not this
// package's business: a fork shares the parent's folder unless its caller
// gives it another (see workbench.ForkSession).
package fork

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// The per-session state keys a fork copies, owned by engine/agent (the
// stored system prompt and the checklist); workbench's
// TestAForkHitsTheParentsCachedPrefixAndHasTheFilesOfItsTurn opens a fork
// as a session and fails if they drift.
const (
	promptKey    = "prompt"
	checklistKey = "checklist"
)

// Options say what to fork.
type Options struct {
	Parent string // the session to fork
	// Turn is the turn the fork ends with (rewind.Turn.N); 0 means the
	// parent's last turn.
	Turn int
	ID   string // the new session's ID, which must be free
	// Title is the fork's title; "" gives the parent's with "(fork)".
	Title string
	// Workspace is the fork's folder; "" shares the parent's.
	Workspace string
	// Note, when not empty, is appended after the copied history as an
	// engine reminder to the model (a worktree fork says where it works
	// now); it follows the copied bytes, so the cached prefix is kept.
	Note string
	Now  func() time.Time
}

// Result is what Fork made.
type Result struct {
	Session  storage.Session // the fork's header, lineage included
	Turn     int             // the turn it was forked at
	Messages int             // messages copied from the parent's current log
	// End is the turn whose start the fork's history ends at: the
	// parent's next turn after Turn, or Turn+1 after its last. The files
	// as they were then are the file history's checkpoint of End.
	End int
}

// ErrNotFound is wrapped by the error Fork returns for a parent that does
// not exist.
var ErrNotFound = errors.New("no such session")

// Fork copies the parent's history up to the end of o.Turn into a new
// session o.ID, in one write transaction: either the whole fork is stored or
// nothing is.
func Fork(st *storage.Store, o Options) (Result, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	var res Result
	err := st.Update(func(tx *storage.Tx) error {
		parent, err := tx.Session(o.Parent)
		if errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("%w: there is no session %q to fork; run `tally sessions` to list them", ErrNotFound, o.Parent)
		} else if err != nil {
			return err
		}
		if _, err := tx.Session(o.ID); err == nil {
			return fmt.Errorf("a session with ID %q already exists; choose another ID for the fork", o.ID)
		}
		recs, err := tx.Log(parent.ID, parent.Cycle)
		if err != nil {
			return err
		}
		entries := make([]transcript.Entry, len(recs))
		for i, r := range recs {
			if entries[i].Msg, err = transcript.Decode(r.Data); err != nil {
				return fmt.Errorf("message %d of session %s is unreadable (%w), so it cannot be forked", r.Seq, parent.ID, err)
			}
		}
		turns, err := rewind.TurnsIn(tx, parent.ID, parent.Cycle, entries)
		if err != nil {
			return err
		}
		t, end, next, err := span(parent, turns, o.Turn, len(entries))
		if err != nil {
			return err
		}
		if open := transcript.Unanswered(messages(entries[:end])); len(open) > 0 {
			return fmt.Errorf("turn %d of session %s is still running (a tool call has no result yet); wait for it to finish, or fork from an earlier turn", t.N, parent.ID)
		}
		meta, err := header(parent, o, t.N, now())
		if err != nil {
			return err
		}
		var snap *rewind.Snapshot
		if next != nil {
			if s, ok, err := rewind.SnapshotIn(tx, parent.ID, next.N); err != nil {
				return err
			} else if ok {
				snap = &s
			}
		}
		if meta.Extra, err = extra(parent.Extra, snap); err != nil {
			return err
		}
		if err := tx.PutSession(meta); err != nil {
			return err
		}
		if err := copyState(tx, parent.ID, meta.ID, snap); err != nil {
			return err
		}
		if err := copyCycles(tx, parent.ID, meta.ID, parent.Cycle); err != nil {
			return err
		}
		for _, r := range recs[:end] {
			if _, err := tx.Append(meta.ID, meta.Cycle, r.Data); err != nil {
				return err
			}
		}
		if o.Note != "" {
			data, err := transcript.Encode(transcript.Injected(transcript.KindReminder, "<system-reminder>\n"+o.Note+"\n</system-reminder>", meta.Created))
			if err != nil {
				return err
			}
			if _, err := tx.Append(meta.ID, meta.Cycle, data); err != nil {
				return err
			}
		}
		if err := rewind.CopyTurns(tx, parent.ID, meta.ID, turns, t.N); err != nil {
			return err
		}
		if err := copyRecords(tx, storage.KindEffort, parent.ID, meta.ID); err != nil {
			return err
		}
		res = Result{Session: meta, Turn: t.N, Messages: end, End: t.N + 1}
		if next != nil {
			res.End = next.N
		}
		return nil
	})
	return res, err
}

// span finds turn n (0: the last) among turns and where it ends in a log
// of size entries: before the next turn's message still in the log, or at
// the log's end. next is that next turn, nil after the last one.
func span(parent storage.Session, turns []rewind.Turn, n, size int) (t rewind.Turn, end int, next *rewind.Turn, err error) {
	var live []rewind.Turn
	for _, x := range turns {
		if !x.Superseded {
			live = append(live, x)
		}
	}
	if len(live) == 0 {
		return t, 0, nil, fmt.Errorf("session %s has no turn yet, so there is nothing to fork; send a message first", parent.ID)
	}
	if n == 0 {
		n = live[len(live)-1].N
	}
	k := -1
	for i, x := range live {
		if x.N == n {
			k = i
		}
	}
	first := firstInLog(live)
	switch {
	case k < 0 && n > 0 && n < live[len(live)-1].N:
		return t, 0, nil, fmt.Errorf("turn %d of session %s was taken out of the conversation by a rewind, so it cannot be forked; fork from another turn", n, parent.ID)
	case k < 0:
		return t, 0, nil, fmt.Errorf("session %s has no turn %d; its turns are %d to %d", parent.ID, n, live[0].N, live[len(live)-1].N)
	case live[k].LogIndex < 0 && first < 0:
		return t, 0, nil, fmt.Errorf("no turn of session %s is in its conversation any more (a compaction or a new cycle took them out), so it cannot be forked; continue it instead", parent.ID)
	case live[k].LogIndex < 0 && live[k].Cycle < parent.Cycle:
		return t, 0, nil, fmt.Errorf("turn %d belongs to cycle %d of session %s, whose prompt is no longer stored, so only %s of the current cycle %d can be forked", n, live[k].Cycle, parent.ID, turnRange(first, live[len(live)-1].N), parent.Cycle)
	case live[k].LogIndex < 0:
		return t, 0, nil, fmt.Errorf("turn %d of session %s lies before a compaction that took it out of the conversation, so only %s can be forked", n, parent.ID, turnRange(first, live[len(live)-1].N))
	}
	t, end = live[k], size
	if k+1 < len(live) {
		nx := live[k+1]
		if nx.LogIndex < 0 {
			return t, 0, nil, fmt.Errorf("where turn %d of session %s ends is no longer in the conversation (a compaction took out turn %d), so fork from turn %d or later", n, parent.ID, nx.N, nx.N+1)
		}
		end, next = nx.LogIndex, &nx
	}
	return t, end, next, nil
}

// turnRange names the turns a to b: "turn 4" or "turns 4 to 7".
func turnRange(a, b int) string {
	if a == b {
		return fmt.Sprintf("turn %d", a)
	}
	return fmt.Sprintf("turns %d to %d", a, b)
}

// firstInLog is the number of the first turn whose message is in the log,
// or -1.
func firstInLog(turns []rewind.Turn) int {
	for _, x := range turns {
		if x.LogIndex >= 0 {
			return x.N
		}
	}
	return -1
}

func messages(entries []transcript.Entry) []transcript.Message {
	out := make([]transcript.Message, len(entries))
	for i := range entries {
		out[i] = entries[i].Msg
	}
	return out
}

// header is the fork's session record: the parent's model, profile and
// cycle, its own ID, title, folder, times and lineage.
func header(parent storage.Session, o Options, turn int, now time.Time) (storage.Session, error) {
	if o.ID == "" {
		return storage.Session{}, errors.New("no ID given for the fork; pass a free session ID")
	}
	meta := parent
	meta.ID, meta.Created, meta.Updated = o.ID, now, now
	meta.ForkOf, meta.ForkTurn = parent.ID, turn
	meta.Title = o.Title
	if meta.Title == "" {
		meta.Title = parent.Title + " (fork)"
	}
	if o.Workspace != "" {
		meta.Workspace = o.Workspace
	}
	return meta, nil
}

// extra is the parent's engine state for the fork: the same, except the
// working set of the turn's end (when recorded) and no usage anchor (the
// parent's was measured on a longer log; the fork's first reply sets one).
func extra(parent json.RawMessage, snap *rewind.Snapshot) (json.RawMessage, error) {
	if len(parent) == 0 {
		return parent, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(parent, &m); err != nil {
		return nil, fmt.Errorf("the parent's stored state is unreadable (%w), so it cannot be forked", err)
	}
	delete(m, "anchor")
	delete(m, "calibration")
	if snap != nil {
		ws, _ := json.Marshal(struct {
			Paths []string `json:"paths"`
		}{append([]string{}, snap.WorkingSet...)})
		m["working_set"] = ws
	}
	return json.Marshal(m)
}

// copyState copies the stored system prompt and the checklist: the one
// recorded at the start of the next turn when there is one, else the
// parent's current one.
func copyState(tx *storage.Tx, from, to string, snap *rewind.Snapshot) error {
	prompt, err := tx.State(from, promptKey)
	if err != nil {
		return err
	}
	if len(prompt) == 0 {
		return fmt.Errorf("session %s has no stored system prompt, so it cannot be forked; the store may be damaged", from)
	}
	if err := tx.PutState(to, promptKey, prompt); err != nil {
		return err
	}
	list := []byte(nil)
	if snap != nil && len(snap.Checklist) > 0 {
		list = snap.Checklist
	} else if list, err = tx.State(from, checklistKey); err != nil {
		return err
	}
	if len(list) == 0 {
		return nil
	}
	return tx.PutState(to, checklistKey, list)
}

// copyCycles copies the logs of the parent's closed cycles and their
// archive records, so recall_archive finds them in the fork.
func copyCycles(tx *storage.Tx, from, to string, current int) error {
	cycles, err := tx.Cycles(from)
	if err != nil {
		return err
	}
	for _, c := range cycles {
		if c >= current {
			continue
		}
		recs, err := tx.Log(from, c)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if _, err := tx.Append(to, c, r.Data); err != nil {
				return err
			}
		}
	}
	return copyRecords(tx, storage.KindArchive, from, to)
}

func copyRecords(tx *storage.Tx, kind storage.Kind, from, to string) error {
	recs, err := tx.Records(kind, from)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if _, err := tx.AddRecord(kind, to, r.Data); err != nil {
			return err
		}
	}
	return nil
}
