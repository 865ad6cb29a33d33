package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/storage"
)

// Archives returns the session's closed cycles, oldest first (see
// rewrite.ReadArchives). It never waits for a running turn.
func (h Compaction) Archives() ([]cycle.Archive, error) { return h.s.rw.Archives() }

// Ledger returns the session's stored usage rows, oldest first.
func (h Audit) Ledger() ([]LedgerRow, error) { return ReadLedger(h.s.cfg.Store, h.s.meta.ID) }

// ReadLedger returns a session's stored usage rows, oldest first.
func ReadLedger(st *storage.Store, id string) ([]LedgerRow, error) {
	recs, err := st.Records(storage.KindLedger, id)
	if err != nil {
		return nil, err
	}
	rows := make([]LedgerRow, 0, len(recs))
	for _, r := range recs {
		var row LedgerRow
		if err := json.Unmarshal(r.Data, &row); err != nil {
			return nil, fmt.Errorf("ledger row %d of session %q is unreadable (%w)", r.Seq, id, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Roots returns a stored session's additional folders (see
// Config.Roots), none when its header cannot be read.
func Roots(meta storage.Session) []string {
	var st struct {
		Roots []string `json:"roots"`
	}
	_ = json.Unmarshal(meta.Extra, &st)
	return st.Roots
}

// Rename sets a session's title.
func Rename(st *storage.Store, id, title string) error {
	title = strings.TrimSpace(title)
	if title == "" {
		return errors.New("a session title cannot be empty; type a name")
	}
	return st.Update(func(tx *storage.Tx) error {
		s, err := tx.Session(id)
		if err != nil {
			return err
		}
		s.Title = title
		return tx.PutSession(s)
	})
}

// Delete removes a session and all of its data from the store.
func Delete(st *storage.Store, id string) error {
	return st.Update(func(tx *storage.Tx) error { return tx.DeleteSession(id) })
}
