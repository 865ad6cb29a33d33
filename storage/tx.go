package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Session is the record kept for each session. Storage interprets only ID;
// everything else belongs to the engine.
//
// Sessions are stored as JSON. Times keep nanosecond precision but lose their
// monotonic clock reading and location, so compare them with time.Time.Equal.
// Extra must be empty or valid JSON and is stored compacted.
type Session struct {
	ID        string `json:"id"`
	Title     string `json:"title,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Model     string `json:"model,omitempty"`
	// Profile is the endpoint profile the session talks to ("" for the
	// main connection); OwnModel says the session chose Model itself (a
	// mid-session switch), so the settings' model does not replace it.
	Profile  string    `json:"profile,omitempty"`
	OwnModel bool      `json:"own_model,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Cycle    int       `json:"cycle"` // current cycle number, starting at 1
	// ForkOf and ForkTurn are the session's lineage: the session it was
	// forked from and the turn it was forked at ("" and 0 for a session
	// started afresh). Storage gives them no meaning and never follows them.
	ForkOf   string          `json:"fork_of,omitempty"`
	ForkTurn int             `json:"fork_turn,omitempty"`
	Extra    json.RawMessage `json:"extra,omitempty"` // engine-owned settings and state, opaque here
}

// Record is one entry of a log or of a record list. Data is a copy owned by
// the caller.
type Record struct {
	Seq  uint64
	Data []byte
}

// Kind names one of the append-only record lists kept for each session.
type Kind string

// The record lists kept for each session. Tx methods taking a Kind return an
// error wrapping ErrInvalid for any other value.
const (
	KindRebuild Kind = "rebuild" // records of recorded log rebuilds
	KindStatus  Kind = "status"  // status text sent with each request
	KindLedger  Kind = "ledger"  // per-request usage rows
	KindArchive Kind = "archive" // closed cycles
	KindEffort  Kind = "effort"  // changes of the reasoning effort
)

var kinds = []Kind{KindRebuild, KindStatus, KindLedger, KindArchive, KindEffort}

// Tx is a storage transaction, passed to the function given to Store.View or
// Store.Update. It is valid only until that function returns and must not be
// shared between goroutines.
//
// Write methods return an error wrapping ErrReadOnly in a View. In an Update,
// an error from any write method, or damage found by any method, dooms the
// transaction: Update writes nothing even if its function returns nil.
//
// Read methods return copies that remain valid after the transaction. Reads of
// a session, cycle or list that has no data return an empty result, not an
// error, unless documented otherwise.
type Tx struct {
	btx      *bolt.Tx
	path     string
	done     bool
	failed   error // first error of a write method or first damage found
	callback bool  // a caller-supplied callback is running
	rules    *searchRules
	// trusted is set in a View that began after EnsureSearchIndex
	// succeeded: the index then follows every session.
	trusted bool
}

// Writable reports whether tx belongs to Store.Update.
func (tx *Tx) Writable() bool { return tx.btx != nil && tx.btx.Writable() }

// begin checks that tx may run op. Every exported method calls it first and
// defers tx.end.
func (tx *Tx) begin(op string, write bool) error {
	if tx.done || tx.btx == nil {
		return newError(ErrTxClosed, nil, "%s called after its transaction finished; use the Tx only inside its View or Update function", op)
	}
	if write && !tx.btx.Writable() {
		return newError(ErrReadOnly, nil, "%s called in a read-only transaction; use Store.Update for writes", op)
	}
	if write && tx.failed != nil {
		return tx.failed
	}
	return nil
}

// end turns a panic raised by bbolt on damaged data into an error and records
// failures that doom a write transaction. Panics raised by caller callbacks
// propagate unchanged.
func (tx *Tx) end(op string, write bool, err *error) {
	if r := recover(); r != nil {
		if tx.callback {
			tx.callback = false
			panic(r)
		}
		*err = newError(ErrCorrupt, panicError{r}, "%s failed because %s is damaged (%v); restore a backup or move the file aside", op, tx.path, r)
	}
	if *err == nil || !tx.Writable() || tx.failed != nil {
		return
	}
	if write || errors.Is(*err, ErrCorrupt) {
		tx.failed = *err
	}
}

// call runs a caller-supplied callback, marking it so that its panics are not
// mistaken for damage.
func (tx *Tx) call(fn func(Record) error, r Record) error {
	tx.callback = true
	err := fn(r)
	tx.callback = false
	return err
}

func (tx *Tx) writeFailed(op string, err error) error {
	return wrapError(err, "%s failed (%v); the transaction will not be committed", op, err)
}

func (tx *Tx) corrupt(what string, cause error) error {
	return newError(ErrCorrupt, cause, "%s in %s is damaged (%v); delete the session or restore a backup", what, tx.path, cause)
}

// checkKey validates a session ID, state key or setting key.
func checkKey(op, what, key string) error {
	if key == "" {
		return newError(ErrInvalid, nil, "%s with an empty %s; pass a non-empty %s", op, what, what)
	}
	if len(key) > bolt.MaxKeySize {
		return newError(ErrInvalid, nil, "%s with a %s of %d bytes; use at most %d bytes", op, what, len(key), bolt.MaxKeySize)
	}
	return nil
}

func cycleKey(op string, cycle int) ([]byte, error) {
	if cycle < 1 || int64(cycle) > math.MaxUint32 {
		return nil, newError(ErrInvalid, nil, "%s with cycle %d; cycles are numbered from 1", op, cycle)
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(cycle))
	return b[:], nil
}

func checkKind(op string, kind Kind) error {
	if !slices.Contains(kinds, kind) {
		return newError(ErrInvalid, nil, "%s with unknown record kind %q; use one of the Kind constants", op, kind)
	}
	return nil
}

func clone(v []byte) []byte {
	out := make([]byte, len(v))
	copy(out, v)
	return out
}

// get returns the value at key and whether the key exists as a value.
func get(b *bolt.Bucket, key []byte) ([]byte, bool) {
	if b == nil {
		return nil, false
	}
	k, v := b.Cursor().Seek(key)
	if k == nil || !bytes.Equal(k, key) || (v == nil && b.Bucket(key) != nil) {
		return nil, false
	}
	return v, true
}

// nested returns the bucket at path below the top-level bucket top, or nil.
func (tx *Tx) nested(top []byte, path ...[]byte) *bolt.Bucket {
	b := tx.btx.Bucket(top)
	for _, p := range path {
		if b == nil {
			return nil
		}
		b = b.Bucket(p)
	}
	return b
}

// create returns the bucket at path below the top-level bucket top, creating
// any missing bucket on the way.
func (tx *Tx) create(top []byte, path ...[]byte) (*bolt.Bucket, error) {
	b, err := tx.btx.CreateBucketIfNotExists(top)
	for _, p := range path {
		if err != nil {
			return nil, err
		}
		b, err = b.CreateBucketIfNotExists(p)
	}
	return b, err
}

// requireSession returns an error wrapping ErrNotFound if session does not
// exist.
func (tx *Tx) requireSession(op, session string) error {
	if err := checkKey(op, "session ID", session); err != nil {
		return err
	}
	if _, ok := get(tx.btx.Bucket(bucketSessions), []byte(session)); !ok {
		return newError(ErrNotFound, nil, "%s: session %q not found; create it with PutSession first", op, session)
	}
	return nil
}

// scan calls fn for each record of b, a bucket keyed by big-endian uint64
// sequences, starting at from.
func (tx *Tx) scan(b *bolt.Bucket, from uint64, what string, fn func(Record) error) error {
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(u64(from)); k != nil; k, v = c.Next() {
		if len(k) != 8 || (v == nil && b.Bucket(k) != nil) {
			return tx.corrupt(what, errMalformedKey(k))
		}
		if err := tx.call(fn, Record{Seq: binary.BigEndian.Uint64(k), Data: clone(v)}); err != nil {
			return err
		}
	}
	return nil
}

type errMalformedKey []byte

func (e errMalformedKey) Error() string {
	return "malformed entry " + hex.EncodeToString(e)
}

// appendTo stores a copy of data in b under the next sequence of seqb.
func appendTo(seqb, b *bolt.Bucket, data []byte) (uint64, error) {
	seq, err := seqb.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, b.Put(u64(seq), clone(data))
}

// PutSession stores s under s.ID, replacing any session with that ID. It does
// not touch the session's logs, records or state.
func (tx *Tx) PutSession(s Session) (err error) {
	const op = "PutSession"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "session ID", s.ID); err != nil {
		return err
	}
	if len(s.Extra) > 0 && !json.Valid(s.Extra) {
		return newError(ErrInvalid, nil, "%s: Extra of session %q is not valid JSON; pass valid JSON or nothing", op, s.ID)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return newError(ErrInvalid, err, "%s: session %q cannot be encoded (%v); check its fields", op, s.ID, err)
	}
	b, err := tx.create(bucketSessions)
	if err == nil {
		err = b.Put([]byte(s.ID), data)
	}
	if err != nil {
		return tx.writeFailed(op, err)
	}
	return nil
}

// Session returns the session with the given ID, or an error wrapping
// ErrNotFound if there is none.
func (tx *Tx) Session(id string) (s Session, err error) {
	const op = "Session"
	if err := tx.begin(op, false); err != nil {
		return Session{}, err
	}
	defer tx.end(op, false, &err)
	if err := checkKey(op, "session ID", id); err != nil {
		return Session{}, err
	}
	v, ok := get(tx.btx.Bucket(bucketSessions), []byte(id))
	if !ok {
		return Session{}, newError(ErrNotFound, nil, "session %q not found; check the ID or list sessions with Sessions", id)
	}
	return tx.decodeSession([]byte(id), v)
}

func (tx *Tx) decodeSession(id, v []byte) (Session, error) {
	var s Session
	if err := json.Unmarshal(v, &s); err != nil {
		return Session{}, tx.corrupt("session "+strconv.Quote(string(id)), err)
	}
	s.ID = string(id)
	return s, nil
}

// Sessions returns all sessions, most recently updated first; sessions with
// equal Updated times are ordered by ID.
func (tx *Tx) Sessions() (list []Session, err error) {
	const op = "Sessions"
	if err := tx.begin(op, false); err != nil {
		return nil, err
	}
	defer tx.end(op, false, &err)
	b := tx.btx.Bucket(bucketSessions)
	if b == nil {
		return nil, nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil && b.Bucket(k) != nil {
			return nil, tx.corrupt("the session list", errMalformedKey(k))
		}
		s, err := tx.decodeSession(k, v)
		if err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	slices.SortFunc(list, func(a, b Session) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return list, nil
}

// DeleteSession removes the session and everything that belongs to it: the
// logs of all its cycles, its records of every Kind, its state and its
// entries in the search index. Blobs are shared between sessions and are
// kept. Deleting a session that does not exist is not an error.
func (tx *Tx) DeleteSession(id string) (err error) {
	const op = "DeleteSession"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "session ID", id); err != nil {
		return err
	}
	key := []byte(id)
	tops := [][]byte{bucketSessions, bucketLog, bucketState}
	for _, k := range kinds {
		tops = append(tops, []byte(k))
	}
	if err := tx.dropSessionIndex(id); err != nil {
		return tx.writeFailed(op, err)
	}
	for _, name := range tops {
		b := tx.btx.Bucket(name)
		if b == nil {
			continue
		}
		var err error
		if b.Bucket(key) != nil {
			err = b.DeleteBucket(key)
		} else {
			err = b.Delete(key)
		}
		if err != nil {
			return tx.writeFailed(op, err)
		}
	}
	return nil
}
