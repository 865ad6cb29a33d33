package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// exportLine is one line of `tally export`. Messages a rebuild removed or
// rewrote (compaction, purge, emergency truncation) come first in their
// cycle, marked with the rebuild that superseded them and their position
// in the log at that time; then the cycle's live log in sequence order.
type exportLine struct {
	Session      string             `json:"session"`
	Cycle        int                `json:"cycle"`
	Seq          uint64             `json:"seq,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
	Index        *int               `json:"index,omitempty"`
	Message      transcript.Message `json:"message"`
}

func cmdExport(args []string, stdout, stderr io.Writer) error {
	_, id, st, err := openSessionStore("export", args, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	enc := json.NewEncoder(stdout)
	return st.View(func(tx *storage.Tx) error {
		cycles, err := tx.Cycles(id)
		if err != nil {
			return err
		}
		rebuilds, err := tx.Records(storage.KindRebuild, id)
		if err != nil {
			return err
		}
		for _, c := range cycles {
			for _, r := range rebuilds {
				var rec transcript.RebuildRecord
				if json.Unmarshal(r.Data, &rec) != nil || rec.Superseded == "" || rec.Cycle != c {
					continue
				}
				blob, err := tx.Blob(rec.Superseded)
				if err != nil {
					return fmt.Errorf("tally export: the messages superseded by the %s of %s are missing (%v)", rec.Reason, rec.Time.Format("2006-01-02 15:04"), err)
				}
				var gone []transcript.Superseded
				if err := json.Unmarshal(blob, &gone); err != nil {
					return fmt.Errorf("tally export: the messages superseded by the %s are unreadable (%v)", rec.Reason, err)
				}
				for _, g := range gone {
					idx := g.Index
					if err := enc.Encode(exportLine{Session: id, Cycle: c, SupersededBy: rec.Reason, Index: &idx, Message: g.Message}); err != nil {
						return err
					}
				}
			}
			recs, err := tx.Log(id, c)
			if err != nil {
				return err
			}
			for _, r := range recs {
				m, err := transcript.Decode(r.Data)
				if err != nil {
					return fmt.Errorf("tally export: cycle %d message %d: %w", c, r.Seq, err)
				}
				if err := enc.Encode(exportLine{Session: id, Cycle: c, Seq: r.Seq, Message: m}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
