package workbench

import (
	"errors"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// searchRules tell the store's search index what Search looks in: the
// searchText of each log message, and of each message a rebuild
// superseded, in the cycle the rebuild rewrote. The index keeps their
// lowercased texts, so Version must change whenever searchText, or what
// Search counts as a superseded message, does; the store then builds the
// index again.
var searchRules = storage.SearchRules{
	Version: "workbench-1",
	Message: func(data []byte) (string, bool) {
		m, err := transcript.Decode(data)
		if err != nil {
			return "", false
		}
		return searchText(m), true
	},
	Kinds:  []storage.Kind{storage.KindRebuild},
	Record: supersededTexts,
}

// supersededTexts are the search texts of the messages a rebuild record
// kept aside, read by the one reader (transcript.ReadKept).
func supersededTexts(kind storage.Kind, data []byte, blob func(string) ([]byte, error)) []storage.RecordText {
	if kind != storage.KindRebuild {
		return nil
	}
	k, ok, err := transcript.ReadKept(data, blob, nil)
	if !ok || err != nil {
		return nil
	}
	gone, err := k.All()
	if err != nil {
		return nil
	}
	texts := make([]storage.RecordText, len(gone))
	for i, g := range gone {
		texts[i] = storage.RecordText{Cycle: k.Record.Cycle, Text: searchText(g.Message)}
	}
	return texts
}

// ReindexSearch builds the search index again from every session's
// history. Search keeps the index up to date on its own (and builds it
// when it is missing); this is for a store whose index is in doubt.
func (w *Workbench) ReindexSearch() error { return w.store.RebuildSearchIndex() }

// errStopScan ends a LogRange early.
var errStopScan = errors.New("stop")

// indexedHits adds the hits of session s that the index finds to add,
// in the order Search gives them; indexed is false, with nothing added,
// when the index cannot answer for the session. full reports that add
// refused a hit.
func indexedHits(tx *storage.Tx, s storage.Session, words []string, q storage.TextQuery, add func(SearchHit) bool) (indexed, full bool) {
	matches, ok, err := tx.MatchTexts(s.ID, q)
	if err != nil || !ok {
		return false, false
	}
	var logged map[int]bool              // the cycles that have a log
	var rebuilds map[uint64][]byte       // rebuild records by sequence
	kept := map[uint64]transcript.Kept{} // their superseded messages
	for _, m := range matches {
		h := SearchHit{Session: s.ID, Title: s.Title, Cycle: m.Cycle, Index: m.Position,
			Current: m.Cycle == s.Cycle || (s.Cycle == 0 && m.Cycle == 1)}
		switch m.Kind {
		case "":
			msg, ok := logMessage(tx, s.ID, m.Cycle, m.Seq)
			if !ok {
				continue
			}
			h.Message = msg
		case storage.KindRebuild:
			if logged == nil {
				logged, rebuilds = cyclesOf(tx, s.ID), recordsOf(tx, s.ID)
			}
			if !logged[m.Cycle] {
				continue // Export shows no superseded messages of a cycle without a log
			}
			k, ok := kept[m.Seq]
			if !ok {
				k, _, _ = transcript.ReadKept(rebuilds[m.Seq], tx.Blob, nil) // none kept: no hit below
				kept[m.Seq] = k
			}
			g, ok := k.At(m.Position)
			if !ok {
				continue
			}
			h.Index, h.Message, h.Superseded, h.SupersededBy = g.Index, g.Message, k.Record.Reason != "", k.Record.Reason
		default:
			continue
		}
		h.Role, h.Snippet = h.Message.Role, hitSnippet(h.Message, words[0])
		if !add(h) {
			return true, true
		}
	}
	return true, false
}

// logMessage reads the message under seq of the session's cycle.
func logMessage(tx *storage.Tx, id string, cycle int, seq uint64) (transcript.Message, bool) {
	var rec storage.Record
	err := tx.LogRange(id, cycle, seq, func(r storage.Record) error {
		rec = r
		return errStopScan
	})
	if !errors.Is(err, errStopScan) || rec.Seq != seq {
		return transcript.Message{}, false
	}
	m, err := transcript.Decode(rec.Data)
	return m, err == nil
}

func cyclesOf(tx *storage.Tx, id string) map[int]bool {
	cycles, _ := tx.Cycles(id)
	out := make(map[int]bool, len(cycles))
	for _, c := range cycles {
		out[c] = true
	}
	return out
}

func recordsOf(tx *storage.Tx, id string) map[uint64][]byte {
	recs, _ := tx.Records(storage.KindRebuild, id)
	out := make(map[uint64][]byte, len(recs))
	for _, r := range recs {
		out[r.Seq] = r.Data
	}
	return out
}
