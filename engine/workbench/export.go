package workbench

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/engine/rewrite"
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
			return fmt.Errorf("cycle %d message %d cannot be encoded (%w); the store may be damaged", l.Cycle, l.Seq, err)
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
		gone, err := rewrite.ReadSuperseded(tx, id, nil)
		if err != nil {
			return err
		}
		for _, c := range cycles {
			for _, p := range gone[c] {
				idx := p.Index
				lines = append(lines, ExportLine{Session: id, Cycle: c, SupersededBy: p.Reason, Index: &idx, Message: p.Message})
			}
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
