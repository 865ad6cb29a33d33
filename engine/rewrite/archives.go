package rewrite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// archiveRecord is the stored record of a closed cycle; its messages stay
// in the cycle's own log in the store.
type archiveRecord struct {
	Cycle    int       `json:"cycle"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Brief    string    `json:"brief"`
	Tokens   int       `json:"tokens"`
	Requests int       `json:"requests"`
}

// PastMessage is a message a rebuild took out of a cycle's log and kept
// aside (see transcript.RebuildRecord.Superseded): the cycle, the
// rebuild's reason and the message's index in the log before it.
type PastMessage struct {
	Cycle   int
	Reason  string
	Index   int
	Message transcript.Message
}

// ReadSuperseded returns, by cycle, the messages the rebuilds of session
// id kept aside, oldest rebuild first; want, when not nil, names the
// cycles to read. It is the one rule by which the archive browser,
// recall_archive, `tally archive` and the export see the messages a
// compaction removed.
func ReadSuperseded(tx *storage.Tx, id string, want map[int]bool) (map[int][]PastMessage, error) {
	rebuilds, err := tx.Records(storage.KindRebuild, id)
	if err != nil {
		return nil, err
	}
	out := map[int][]PastMessage{}
	for _, r := range rebuilds {
		k, ok, err := transcript.ReadKept(r.Data, tx.Blob, func(rec transcript.RebuildRecord) bool {
			return want == nil || want[rec.Cycle]
		})
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		rec := k.Record
		gone, err := k.All()
		if err != nil {
			return nil, err
		}
		for _, g := range gone {
			out[rec.Cycle] = append(out[rec.Cycle], PastMessage{Cycle: rec.Cycle, Reason: rec.Reason, Index: g.Index, Message: g.Message})
		}
	}
	return out, nil
}

// Archives returns the session's closed cycles, oldest first (see
// ReadArchives). It does not wait for a running turn.
func (r *Session) Archives() ([]cycle.Archive, error) {
	return ReadArchives(r.opt.Store, r.host.Meta().ID)
}

// ReadArchives returns a session's closed cycles, oldest first, each with
// every message it ever held: those its compactions removed (in the order
// they were removed) and then its final log. The app's archive browser,
// recall_archive and `tally archive` all read archives through it, so they
// show the same messages for a cycle.
func ReadArchives(st *storage.Store, id string) ([]cycle.Archive, error) {
	var out []cycle.Archive
	err := st.View(func(tx *storage.Tx) error {
		recs, err := tx.Records(storage.KindArchive, id)
		if err != nil {
			return err
		}
		want := map[int]bool{}
		var archived []archiveRecord
		for _, r := range recs {
			var a archiveRecord
			if err := json.Unmarshal(r.Data, &a); err != nil {
				return fmt.Errorf("archive record %d of session %q is unreadable (%w)", r.Seq, id, err)
			}
			archived = append(archived, a)
			want[a.Cycle] = true
		}
		gone, err := ReadSuperseded(tx, id, want)
		if err != nil {
			return err
		}
		for _, a := range archived {
			logRecs, err := tx.Log(id, a.Cycle)
			if err != nil {
				return err
			}
			arch := cycle.Archive{Cycle: a.Cycle, Started: a.Started, Ended: a.Ended, Brief: a.Brief, Tokens: a.Tokens, Requests: a.Requests}
			for _, p := range gone[a.Cycle] {
				arch.Messages = append(arch.Messages, p.Message)
			}
			for _, lr := range logRecs {
				m, err := transcript.Decode(lr.Data)
				if err != nil {
					return err
				}
				arch.Messages = append(arch.Messages, m)
			}
			out = append(out, arch)
		}
		return nil
	})
	return out, err
}
