package workbench

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// ExportLine is one line of a session's export. Messages a rebuild removed
// or rewrote (compaction, purge, emergency truncation) come first in their
// cycle, marked with the reason of the rebuild that superseded them
// (SupersededBy) and their position in the log at that time (Index); then
// the cycle's live log in sequence order (Seq).
type ExportLine struct {
	Session      string             `json:"session"`
	Cycle        int                `json:"cycle"`
	Seq          uint64             `json:"seq,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
	Index        *int               `json:"index,omitempty"`
	Message      transcript.Message `json:"message"`
}

// Export writes the whole history of session id, every cycle oldest
// first, as JSON lines: each call of each gets one ExportLine encoded as a
// JSON object followed by a newline, so writing the lines in order gives
// the export file. Nothing committed is left out: superseded messages are
// included, marked. The history is read in one read transaction, a
// consistent snapshot, and each is called after it has ended, so each may
// take its time or use the workbench. The first error of each stops the
// export and is returned as it is. A session that does not exist is an
// error matching ErrNotFound; when part of the history is damaged, the
// lines before it are still passed to each, then an error says which part
// is unreadable.
func (w *Workbench) Export(id string, each func(line []byte) error) error {
	lines, readErr := w.exportLines(id)
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("cycle %d message %d cannot be encoded (%v); the store may be damaged", l.Cycle, l.Seq, err)
		}
		if err := each(append(b, '\n')); err != nil {
			return err
		}
	}
	return readErr
}

// exportLines reads the lines of Export in one read transaction; on an
// error it returns the lines read before it too.
func (w *Workbench) exportLines(id string) ([]ExportLine, error) {
	var lines []ExportLine
	err := w.store.View(func(tx *storage.Tx) error {
		if _, err := tx.Session(id); err != nil {
			return err
		}
		cycles, err := tx.Cycles(id)
		if err != nil {
			return err
		}
		gone, err := supersededByCycle(tx, id, nil)
		if err != nil {
			return err
		}
		for _, c := range cycles {
			lines = append(lines, gone[c]...)
			recs, err := tx.Log(id, c)
			if err != nil {
				return err
			}
			for _, r := range recs {
				m, err := transcript.Decode(r.Data)
				if err != nil {
					return fmt.Errorf("cycle %d message %d: %w", c, r.Seq, err)
				}
				lines = append(lines, ExportLine{Session: id, Cycle: c, Seq: r.Seq, Message: m})
			}
		}
		return nil
	})
	return lines, err
}

// supersededByCycle reads the messages the rebuilds of session id kept
// aside, by cycle, each cycle's in record order, as export lines; only the
// cycles in want are read (nil: all).
func supersededByCycle(tx *storage.Tx, id string, want map[int]bool) (map[int][]ExportLine, error) {
	rebuilds, err := tx.Records(storage.KindRebuild, id)
	if err != nil {
		return nil, err
	}
	out := map[int][]ExportLine{}
	for _, r := range rebuilds {
		var rec transcript.RebuildRecord
		if json.Unmarshal(r.Data, &rec) != nil || rec.Superseded == "" || (want != nil && !want[rec.Cycle]) {
			continue
		}
		gone, err := superseded(tx, rec)
		if err != nil {
			return nil, err
		}
		for _, g := range gone {
			idx := g.Index
			out[rec.Cycle] = append(out[rec.Cycle], ExportLine{Session: id, Cycle: rec.Cycle, SupersededBy: rec.Reason, Index: &idx, Message: g.Message})
		}
	}
	return out, nil
}

// superseded reads the messages a rebuild kept aside.
func superseded(tx *storage.Tx, rec transcript.RebuildRecord) ([]transcript.Superseded, error) {
	blob, err := tx.Blob(rec.Superseded)
	if err != nil {
		return nil, fmt.Errorf("the messages superseded by the %s of %s are missing (%v)", rec.Reason, rec.Time.Format("2006-01-02 15:04"), err)
	}
	var gone []transcript.Superseded
	if err := json.Unmarshal(blob, &gone); err != nil {
		return nil, fmt.Errorf("the messages superseded by the %s are unreadable (%v)", rec.Reason, err)
	}
	return gone, nil
}
