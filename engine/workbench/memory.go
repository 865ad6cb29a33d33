package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/memory"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/trust"
	"github.com/tally-dev/tally/storage"
)

// Memory you review: the model proposes entries over a session's
// conversation; they wait, stored in the settings bucket under
// memoryKey (so they survive restarts and travel with the data folder),
// until the user accepts, edits or rejects each one. Accepting writes the
// entry to its memory file, which new sessions read when they start
// (memory.Section through the prompt's context pack); nothing reaches a
// prompt unreviewed, and no running session's prefix changes.

// memoryKey is the setting that holds the pending proposals.
const memoryKey = "memory_proposals"

// memoryBook is the stored value of memoryKey.
type memoryBook struct {
	Next    int            `json:"next"` // the last ID given
	Pending []memory.Entry `json:"pending"`
	// Proposed is, for each session memory was proposed from, how many
	// turns it had then (see MemoryDue).
	Proposed map[string]int `json:"proposed,omitempty"`
}

// MemoryDueTurns is how many turns a session must have had since memory
// was last proposed from it (or since it began) for leaving it in the app
// to propose again.
const MemoryDueTurns = 3

// MemoryDue reports whether proposing memory from sess when the user
// leaves it is worth its request: the user did not turn it off
// (Settings.NoMemoryOnLeave), it is no demo, no turn of it is under way,
// and it has had MemoryDueTurns turns or more since memory was last
// proposed from it. It reads the store and the session's published view.
func (w *Workbench) MemoryDue(sess *agent.Session) bool {
	view := sess.Snapshot()
	if w.Settings().NoMemoryOnLeave || view.Meta.Model == demo.ModelName || len(transcript.Unanswered(view.Messages())) > 0 {
		return false
	}
	turns := 0
	for _, t := range view.Turns() {
		if !t.Superseded {
			turns++
		}
	}
	var b memoryBook
	if err := w.store.View(func(tx *storage.Tx) (err error) { b, err = readMemoryBook(tx); return err }); err != nil {
		return false
	}
	return turns-b.Proposed[view.Meta.ID] >= MemoryDueTurns
}

// readMemoryBook reads the pending proposals within tx.
func readMemoryBook(tx *storage.Tx) (memoryBook, error) {
	var b memoryBook
	data, err := tx.Setting(memoryKey)
	if err != nil || len(data) == 0 {
		return b, err
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return memoryBook{}, fmt.Errorf("%w (%w); reject them all with `tally memory reject all`", errMemoryBook, err)
	}
	return b, nil
}

// errMemoryBook is matched by the error of unreadable stored proposals.
var errMemoryBook = errors.New("the stored memory proposals are unreadable")

// updateMemory changes the pending proposals in one transaction; fresh
// lets fn start from none when the stored ones are unreadable.
func (w *Workbench) updateMemory(fresh bool, fn func(b *memoryBook) error) error {
	return w.store.Update(func(tx *storage.Tx) error {
		b, err := readMemoryBook(tx)
		if err != nil && !(fresh && errors.Is(err, errMemoryBook)) {
			return err
		}
		if err := fn(&b); err != nil {
			return err
		}
		data, err := json.Marshal(b)
		if err != nil {
			return err
		}
		return tx.PutSetting(memoryKey, data)
	})
}

// PendingMemory lists the proposals waiting for review, oldest first.
func (w *Workbench) PendingMemory() ([]memory.Entry, error) {
	var b memoryBook
	err := w.store.View(func(tx *storage.Tx) (err error) { b, err = readMemoryBook(tx); return err })
	return b.Pending, err
}

// AcceptedMemory reads the entries accepted for workspace: its
// .tally/memory.md, then the user's own memory.md (preferences).
func (w *Workbench) AcceptedMemory(workspace string) []memory.Entry {
	return memory.Accepted(workspace, userConfigDir())
}

// MemoryCost is an entry's share of the prefix of the sessions it enters,
// in tokens; MemoryHeadCost is what the memory section's heading adds
// once.
func MemoryCost(e memory.Entry) int { return memory.Cost(e) }

// MemoryHeadCost is the tokens of the memory section's heading, added to
// the prefix once when any entry is accepted.
func MemoryHeadCost() int { return memory.HeadCost() }

// MemoryKinds lists the kinds of entries in the order they are shown.
func MemoryKinds() []memory.Kind { return slices.Clone(memory.Kinds) }

// MemoryFile is where an accepted e is kept: its workspace's
// .tally/memory.md, or the user's memory.md for a preference.
func MemoryFile(e memory.Entry) (string, error) { return memory.FileFor(e, userConfigDir()) }

// ProposeMemory asks sess's model for memory entries over its
// conversation (one request sharing the session's cached prefix, recorded
// in its ledger as a memory row) and stores the valid ones as pending.
// Entries already pending or accepted are dropped with a note, as are
// malformed ones; an answer that is not the JSON asked for gives a note
// and no entry, never an error.
func (w *Workbench) ProposeMemory(ctx context.Context, sess *agent.Session) (memory.Proposal, error) {
	view := sess.Snapshot()
	var turns []memory.Turn
	for _, t := range view.Turns() {
		if !t.Superseded {
			turns = append(turns, memory.Turn{N: t.N, Text: t.Text})
		}
	}
	meta := view.Meta
	switch {
	case len(turns) == 0:
		return memory.Proposal{}, fmt.Errorf("session %s has no turn to propose memory from yet; send a message first", meta.ID)
	case len(transcript.Unanswered(view.Messages())) > 0:
		return memory.Proposal{}, fmt.Errorf("session %s is in the middle of a turn (its tool calls wait for results); propose memory when the turn ends", meta.ID)
	}
	p, err := memory.Propose(ctx, sess.Audit().Metered(ledger.KindMemory), sess.Audit().NextRequest(), turns, meta.ID, meta.Workspace)
	if err != nil {
		return p, err
	}
	known := map[string]bool{}
	for _, e := range w.AcceptedMemory(meta.Workspace) {
		known[string(e.Kind)+e.Text] = true
	}
	now := time.Now().UTC()
	err = w.updateMemory(false, func(b *memoryBook) error {
		for _, e := range b.Pending {
			known[string(e.Kind)+e.Text] = true
		}
		kept := p.Entries[:0]
		for _, e := range p.Entries {
			if known[string(e.Kind)+e.Text] {
				p.Notes = append(p.Notes, fmt.Sprintf("%q was dropped: it is already pending or remembered", e.Text))
				continue
			}
			b.Next++
			e.ID, e.Proposed = b.Next, now
			b.Pending = append(b.Pending, e)
			kept = append(kept, e)
		}
		p.Entries = kept
		if b.Proposed == nil {
			b.Proposed = map[string]int{}
		}
		b.Proposed[meta.ID] = len(turns)
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("the proposed memory entries could not be stored (%w); propose them again", err)
	}
	return p, nil
}

// errNoProposal says id is not pending.
func errNoProposal(id int) error {
	return fmt.Errorf("no memory proposal %d is pending; run `tally memory list` to see them", id)
}

// AcceptMemory writes pending proposal id to its memory file (see
// MemoryFile) and removes it from the pending ones; sessions started from
// now on have it in their prompt. It returns the entry as kept.
func (w *Workbench) AcceptMemory(id int) (memory.Entry, error) {
	var out memory.Entry
	pending, err := w.PendingMemory()
	if err != nil {
		return out, err
	}
	ws := ""
	if i := slices.IndexFunc(pending, func(e memory.Entry) bool { return e.ID == id }); i >= 0 && !pending[i].Kind.User() {
		ws = pending[i].Workspace
	}
	var hooksHeld, mcpHeld bool
	if ws != "" {
		hooksHeld, mcpHeld = w.heldTrust(ws) // the memory file is written under its .tally folder
	}
	err = w.updateMemory(false, func(b *memoryBook) error {
		i := slices.IndexFunc(b.Pending, func(e memory.Entry) bool { return e.ID == id })
		if i < 0 {
			return errNoProposal(id)
		}
		e := b.Pending[i]
		path, err := memory.FileFor(e, userConfigDir())
		if err != nil {
			return err
		}
		if err := memory.Append(path, e); err != nil {
			return err
		}
		e.File = path
		out = e
		b.Pending = slices.Delete(b.Pending, i, i+1)
		return nil
	})
	if err == nil && ws != "" {
		err = w.renewTrust(ws, hooksHeld, mcpHeld)
	}
	return out, err
}

// EditMemory replaces the text of pending proposal id and, when kind is
// not "", its kind; it stays pending until accepted. The text is cleaned
// as a proposal's is (one line, secrets redacted).
func (w *Workbench) EditMemory(id int, text string, kind memory.Kind) (memory.Entry, error) {
	var out memory.Entry
	clean, err := memory.Clean(text)
	if err != nil {
		return out, err
	}
	if kind != "" {
		if kind, err = memory.ParseKind(string(kind)); err != nil {
			return out, err
		}
	}
	err = w.updateMemory(false, func(b *memoryBook) error {
		i := slices.IndexFunc(b.Pending, func(e memory.Entry) bool { return e.ID == id })
		if i < 0 {
			return errNoProposal(id)
		}
		b.Pending[i].Text = clean
		if kind != "" {
			b.Pending[i].Kind = kind
		}
		out = b.Pending[i]
		return nil
	})
	return out, err
}

// RejectMemory drops pending proposal id; it is remembered nowhere. id 0
// drops every pending proposal.
func (w *Workbench) RejectMemory(id int) error {
	return w.updateMemory(id == 0, func(b *memoryBook) error {
		if id == 0 {
			b.Pending = nil
			return nil
		}
		i := slices.IndexFunc(b.Pending, func(e memory.Entry) bool { return e.ID == id })
		if i < 0 {
			return errNoProposal(id)
		}
		b.Pending = slices.Delete(b.Pending, i, i+1)
		return nil
	})
}

// heldTrust reports which of workspace ws's hooks and MCP files are
// trusted now.
func (w *Workbench) heldTrust(ws string) (hooksHeld, mcpHeld bool) {
	if wf, err := w.HooksWorkspaceFile(ws); err == nil && wf.Path != "" && !wf.NeedsTrust {
		hooksHeld = true
	}
	if wf, err := w.MCPWorkspaceFile(ws); err == nil && wf.Path != "" && !wf.NeedsTrust {
		mcpHeld = true
	}
	return hooksHeld, mcpHeld
}

// renewTrust trusts workspace ws's hooks and MCP files as they are now,
// each only when it was trusted right before Tally wrote its own memory
// file there (see heldTrust): their fingerprints cover the whole .tally
// folder, and the user's own accept must not withdraw a trust that
// nothing else changed. Trust that did not hold before stays withdrawn.
func (w *Workbench) renewTrust(ws string, hooksHeld, mcpHeld bool) error {
	if wf, err := w.HooksWorkspaceFile(ws); hooksHeld && err == nil && wf.Hash != "" {
		if err := trust.Put(w.store, trust.Hooks, ws, wf.Hash); err != nil {
			return err
		}
	}
	if wf, err := w.MCPWorkspaceFile(ws); mcpHeld && err == nil && wf.Hash != "" {
		return trust.Put(w.store, trust.MCP, ws, wf.Hash)
	}
	return nil
}
