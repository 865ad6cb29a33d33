package workbench

import (
	"bytes"
	"encoding/json"
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
// kept aside, read the way agent.ReadSuperseded reads them.
func supersededTexts(kind storage.Kind, data []byte, blob func(string) ([]byte, error)) []storage.RecordText {
	rec, gone, ok := readRebuild(kind, data, blob)
	if !ok {
		return nil
	}
	texts := make([]storage.RecordText, len(gone))
	for i, g := range gone {
		texts[i] = storage.RecordText{Cycle: rec.Cycle, Text: searchText(g.Message)}
	}
	return texts
}

// readRebuild decodes a rebuild record and the superseded messages it
// points to; ok is false for a record that keeps none or cannot be read.
func readRebuild(kind storage.Kind, data []byte, blob func(string) ([]byte, error)) (rec transcript.RebuildRecord, gone []transcript.Superseded, ok bool) {
	if kind != storage.KindRebuild || json.Unmarshal(data, &rec) != nil || rec.Superseded == "" {
		return rec, nil, false
	}
	b, err := blob(rec.Superseded)
	if err != nil || json.Unmarshal(b, &gone) != nil {
		return rec, nil, false
	}
	return rec, gone, true
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
	var logged map[int]bool          // the cycles that have a log
	var rebuilds map[uint64][]byte   // rebuild records by sequence
	kept := map[uint64]rebuildKept{} // their superseded messages
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
				k = keptBy(tx, rebuilds[m.Seq])
				kept[m.Seq] = k
			}
			var g transcript.Superseded
			if m.Position >= len(k.gone) || json.Unmarshal(k.gone[m.Position], &g) != nil {
				continue
			}
			h.Index, h.Message, h.Superseded = g.Index, g.Message, k.rec.Reason != ""
		default:
			continue
		}
		h.Role, h.Snippet = h.Message.Role, snippet(searchText(h.Message), m.Text, words[0])
		if !add(h) {
			return true, true
		}
	}
	return true, false
}

// rebuildKept is a rebuild record with the messages it superseded, each
// left undecoded (a JSON transcript.Superseded) until it is a hit.
type rebuildKept struct {
	rec  transcript.RebuildRecord
	gone [][]byte
}

// keptBy reads the rebuild record data and finds its superseded messages.
func keptBy(tx *storage.Tx, data []byte) (k rebuildKept) {
	if json.Unmarshal(data, &k.rec) != nil || k.rec.Superseded == "" {
		return k
	}
	if blob, err := tx.Blob(k.rec.Superseded); err == nil {
		k.gone = splitArray(blob)
	}
	return k
}

// splitArray returns the elements of the JSON array b without decoding
// them, or nil when b is not an array. It only follows brackets and
// strings: each element is decoded (and checked) on its own later.
func splitArray(b []byte) [][]byte {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil
	}
	var out [][]byte
	depth, start, inString, escaped := 0, 1, false, false
	for i := 1; i < len(b)-1; i++ {
		c := b[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, b[start:i])
			start = i + 1
		}
	}
	if last := bytes.TrimSpace(b[start : len(b)-1]); len(last) > 0 || len(out) > 0 {
		out = append(out, b[start:len(b)-1])
	}
	return out
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
