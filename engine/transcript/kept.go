package transcript

import (
	"encoding/json"
	"fmt"
)

// Kept is a rebuild record with the messages it kept aside (its
// Superseded blob), each still encoded until it is asked for. It is the
// one reader of what a compaction, purge, rewind or new cycle removed: the
// archive browser, recall_archive, `tally archive`, the export, the
// compaction history and the search index all read through it.
type Kept struct {
	Record RebuildRecord
	raw    []json.RawMessage
}

// ReadKept decodes a rebuild record's data and, through blob (which
// returns a stored blob by its SHA-256), the array of messages it kept
// aside. ok is false, with no error, for a record that keeps nothing or
// cannot be decoded (an older or foreign record: nothing to show), and for
// one that want (when not nil) turns down, whose blob is then not read.
// The error says that the kept messages are missing or damaged.
func ReadKept(data []byte, blob func(sha string) ([]byte, error), want func(RebuildRecord) bool) (k Kept, ok bool, err error) {
	if json.Unmarshal(data, &k.Record) != nil || k.Record.Superseded == "" || (want != nil && !want(k.Record)) {
		return k, false, nil
	}
	when := k.Record.Time.Format("2006-01-02 15:04")
	b, err := blob(k.Record.Superseded)
	if err != nil {
		return k, false, fmt.Errorf("the messages superseded by the %s of %s are missing (%w); the rest of the session is intact", k.Record.Reason, when, err)
	}
	if err := json.Unmarshal(b, &k.raw); err != nil {
		return k, false, fmt.Errorf("the messages superseded by the %s of %s are unreadable (%w); the rest of the session is intact", k.Record.Reason, when, err)
	}
	return k, true, nil
}

// Len returns the number of kept messages.
func (k Kept) Len() int { return len(k.raw) }

// At decodes the i-th kept message; ok is false when it is out of range
// or damaged.
func (k Kept) At(i int) (Superseded, bool) {
	var g Superseded
	if i < 0 || i >= len(k.raw) || json.Unmarshal(k.raw[i], &g) != nil {
		return g, false
	}
	return g, true
}

// All decodes every kept message, in the order they were kept.
func (k Kept) All() ([]Superseded, error) {
	out := make([]Superseded, 0, len(k.raw))
	for i := range k.raw {
		g, ok := k.At(i)
		if !ok {
			return nil, fmt.Errorf("message %d of those removed by the %s is unreadable; the rest of the session is intact", i+1, k.Record.Reason)
		}
		out = append(out, g)
	}
	return out, nil
}

// ReadRewrite decodes a rebuild record with the messages it kept aside,
// if any (see ReadKept); a record that kept nothing is a Rewrite with no
// Gone. ok is false, with no error, for data that is no rebuild record or
// that want turns down.
func ReadRewrite(data []byte, blob func(sha string) ([]byte, error), want func(RebuildRecord) bool) (r Rewrite, ok bool, err error) {
	if json.Unmarshal(data, &r.Record) != nil || (want != nil && !want(r.Record)) {
		return r, false, nil
	}
	k, kept, err := ReadKept(data, blob, nil)
	if err != nil || !kept {
		return r, err == nil, err
	}
	r.Gone, err = k.All()
	return r, err == nil, err
}
