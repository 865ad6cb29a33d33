package workbench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// ExportLine is one line of a session's export. The lines of each cycle,
// oldest cycle first, follow the cycle's history (transcript.History):
// every message where it was appended, and at each rewrite of the log
// (compaction, purge, rewind, emergency truncation, a new cycle) a line
// that marks it (Rewrite, with no message). A message a rewrite removed
// or changed is marked with that rewrite's reason (SupersededBy) and its
// position in the log at that time (Index); one a rewrite wrote (a
// summary, a cleared result, a cycle's seed) names it in WrittenBy; one
// the log still holds carries its sequence number (Seq).
type ExportLine struct {
	Session      string             `json:"session"`
	Cycle        int                `json:"cycle"`
	Seq          uint64             `json:"seq,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
	Index        *int               `json:"index,omitempty"`
	WrittenBy    string             `json:"written_by,omitempty"`
	Rewrite      *ExportRewrite     `json:"rewrite,omitempty"`
	Message      transcript.Message `json:"message,omitzero"`
	// logIndex is the message's index in the cycle's log as it stands,
	// -1 when the log no longer holds it.
	logIndex int
}

// ExportRewrite marks where a rewrite of a cycle's log happened.
type ExportRewrite struct {
	Reason       string    `json:"reason"`
	Time         time.Time `json:"time"`
	TokensBefore int       `json:"tokens_before"`
	TokensAfter  int       `json:"tokens_after"`
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
		rewrites, err := readRewrites(tx, id)
		if err != nil {
			return err
		}
		for _, c := range cycles {
			recs, err := tx.Log(id, c)
			if err != nil {
				return err
			}
			live := make([]transcript.Message, 0, len(recs))
			for _, r := range recs {
				m, err := transcript.Decode(r.Data)
				if err != nil {
					return fmt.Errorf("cycle %d message %d: %w", c, r.Seq, err)
				}
				live = append(live, m)
			}
			lines = append(lines, cycleLines(id, c, rewrites[c], recs, live)...)
		}
		return nil
	})
	return lines, err
}

// readRewrites returns the rebuilds of session id by cycle, oldest first,
// with what each kept aside.
func readRewrites(tx *storage.Tx, id string) (map[int][]transcript.Rewrite, error) {
	recs, err := tx.Records(storage.KindRebuild, id)
	if err != nil {
		return nil, err
	}
	out := map[int][]transcript.Rewrite{}
	for _, r := range recs {
		rw, ok, err := transcript.ReadRewrite(r.Data, tx.Blob, nil)
		if err != nil {
			return nil, err
		}
		if ok {
			c := max(rw.Record.Cycle, 1)
			out[c] = append(out[c], rw)
		}
	}
	return out, nil
}

// cycleLines lays out one cycle by its history; records of an older Tally
// that History cannot place give the older layout: what the rewrites
// removed first, then the live log.
func cycleLines(id string, c int, rws []transcript.Rewrite, recs []storage.Record, live []transcript.Message) []ExportLine {
	var lines []ExportLine
	if steps, ok := transcript.History(rws, live); ok {
		for _, st := range steps {
			if st.Rewrite >= 0 {
				r := rws[st.Rewrite].Record
				shown := rewrite.Info{TokensBefore: r.BeforeTokens, TokensAfter: r.AfterTokens}
				if len(r.Shown) > 0 {
					_ = json.Unmarshal(r.Shown, &shown) // the figures the app showed, when recorded
				}
				lines = append(lines, ExportLine{Session: id, Cycle: c, logIndex: -1, Rewrite: &ExportRewrite{
					Reason: r.Reason, Time: r.Time, TokensBefore: shown.TokensBefore, TokensAfter: shown.TokensAfter}})
				continue
			}
			l := ExportLine{Session: id, Cycle: c, Message: st.Msg, logIndex: st.LogIndex}
			if st.WrittenBy >= 0 {
				l.WrittenBy = rws[st.WrittenBy].Record.Reason
			}
			if st.GoneBy >= 0 {
				l.SupersededBy = rws[st.GoneBy].Record.Reason
				for _, g := range rws[st.GoneBy].Gone {
					if g.Message.Time.Equal(st.Msg.Time) && g.Message.Body() == st.Msg.Body() {
						idx := g.Index
						l.Index = &idx
						break
					}
				}
			}
			if st.LogIndex >= 0 {
				l.Seq = recs[st.LogIndex].Seq
			}
			lines = append(lines, l)
		}
		return lines
	}
	for _, rw := range rws {
		for _, g := range rw.Gone {
			idx := g.Index
			lines = append(lines, ExportLine{Session: id, Cycle: c, SupersededBy: rw.Record.Reason, Index: &idx, Message: g.Message, logIndex: -1})
		}
	}
	for i, m := range live {
		lines = append(lines, ExportLine{Session: id, Cycle: c, Seq: recs[i].Seq, Message: m, logIndex: i})
	}
	return lines
}
