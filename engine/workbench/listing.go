package workbench

import "github.com/tally-dev/tally/storage"

// SessionSummary is a stored session's header with the number of messages
// in the log of its current cycle.
type SessionSummary struct {
	SessionInfo
	Messages int
}

// SessionSummaries lists the stored sessions, most recently updated first,
// each with its current cycle's message count. Headers and counts are read
// in one read transaction, so they agree with each other.
func (w *Workbench) SessionSummaries() ([]SessionSummary, error) {
	var rows []SessionSummary
	err := w.store.View(func(tx *storage.Tx) error {
		list, err := tx.Sessions()
		if err != nil {
			return err
		}
		for _, s := range list {
			n, err := tx.LogLen(s.ID, s.Cycle)
			if err != nil {
				return err
			}
			rows = append(rows, SessionSummary{SessionInfo: s, Messages: n})
		}
		return nil
	})
	return rows, err
}
