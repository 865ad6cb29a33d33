package storage

import (
	"bytes"
	"encoding/binary"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Keeping the search index: the write methods call sessionIndex before
// they write and the sessionIndex methods after, in the same transaction,
// so the index changes exactly when the log does. Each write indexes
// only what it adds.

// searchBatchBytes is about how much text one Update of a build indexes
// before it commits and the next one goes on.
const searchBatchBytes = 16 << 20

// indexFill is the FillPercent of a session's index bucket. Its texts
// arrive in key order, where bbolt's default of half-full pages would
// double the index's size.
const indexFill = 0.9

// sessionIndex is one session's index bucket during a write that keeps it.
type sessionIndex struct {
	tx      *Tx
	session string
	ss, b   *bolt.Bucket // the indexed sessions and the session's bucket
	n       int          // bytes of text indexed
}

// sessionIndex returns the session's index to keep up with the write
// about to happen, or nil when there is none to keep: the Store has no
// rules, the index is not built under them, or it does not follow the
// session now. An index that lags behind the session is dropped here, for
// EnsureSearchIndex to build again; a session without history gets one.
func (tx *Tx) sessionIndex(session string) (*sessionIndex, error) {
	ss := tx.searchSessions()
	if ss == nil {
		return nil, nil
	}
	key := []byte(session)
	mark := tx.watermark(session)
	b := ss.Bucket(key)
	switch {
	case b != nil && bytes.Equal(b.Get(keySearchMark), mark):
	case b != nil:
		return nil, ss.DeleteBucket(key)
	case isZero(mark):
		var err error
		if b, err = ss.CreateBucket(key); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	b.FillPercent = indexFill
	return &sessionIndex{tx: tx, session: session, ss: ss, b: b}, nil
}

// done records that the index follows the session as it is now. A
// session without history keeps no bucket, as a build leaves it.
func (ix *sessionIndex) done() error {
	mark := ix.tx.watermark(ix.session)
	if isZero(mark) {
		return ix.ss.DeleteBucket([]byte(ix.session))
	}
	return ix.b.Put(keySearchMark, mark)
}

// put stores text under doc (a docKey without its prefix).
func (ix *sessionIndex) put(doc []byte, position int, text string) error {
	low := []byte(strings.ToLower(text))
	bits := sigBits(len(low))
	v := binary.BigEndian.AppendUint32(make([]byte, 0, 5+1<<bits/8), clampU32(position))
	v = append(append(v, bits), signature(low, bits)...)
	if err := ix.b.Put(append([]byte{prefixDoc}, doc...), v); err != nil {
		return err
	}
	ix.n += len(low)
	return ix.b.Put(append([]byte{prefixText}, doc...), low)
}

// addMessage indexes the log message data written to cycle under seq at
// position (its index in the cycle's log).
func (ix *sessionIndex) addMessage(cycle uint32, seq uint64, position int, data []byte) error {
	text, ok := ix.tx.rules.message(data)
	if !ok {
		return nil
	}
	return ix.put(docKey(prefixDoc, cycle, classLog, seq, 0)[1:], position, text)
}

// dropLog removes the indexed messages of the cycle's log.
func (ix *sessionIndex) dropLog(cycle uint32) error {
	var keys [][]byte
	for _, prefix := range []byte{prefixDoc, prefixText} {
		p := docKey(prefix, cycle, classLog, 0, 0)[:6]
		c := ix.b.Cursor()
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
	}
	for _, k := range keys {
		if err := ix.b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// addRecord indexes the texts of the record data of kind added under seq.
func (ix *sessionIndex) addRecord(kind Kind, seq uint64, data []byte) error {
	class := byte(0)
	for i, k := range kinds {
		if k == kind {
			class = byte(i)
		}
	}
	for i, t := range ix.tx.rules.record(kind, data, ix.tx.rawBlob) {
		if t.Cycle < 1 || int64(t.Cycle) > int64(^uint32(0)) {
			continue
		}
		if err := ix.put(docKey(prefixDoc, uint32(t.Cycle), class, seq, clampU32(i))[1:], i, t.Text); err != nil {
			return err
		}
	}
	return nil
}

// rawBlob is the blob stored under sha, for the rules; it does not check
// the hash, so a damaged blob never dooms the write that indexes it.
func (tx *Tx) rawBlob(sha string) ([]byte, error) {
	v, ok := get(tx.btx.Bucket(bucketBlobs), []byte(sha))
	if !ok {
		return nil, newError(ErrNotFound, nil, "blob %s not found; store it with PutBlob first", sha)
	}
	return clone(v), nil
}

// indexSession indexes the session from its log and records, replacing
// what the index held for it, and returns the bytes of text indexed. A
// session that no longer exists is dropped from the index.
func (tx *Tx) indexSession(ss *bolt.Bucket, session string) (int, error) {
	key := []byte(session)
	if ss.Bucket(key) != nil {
		if err := ss.DeleteBucket(key); err != nil {
			return 0, err
		}
	}
	if _, ok := get(tx.btx.Bucket(bucketSessions), key); !ok || isZero(tx.watermark(session)) {
		return 0, nil
	}
	b, err := ss.CreateBucket(key)
	if err != nil {
		return 0, err
	}
	b.FillPercent = indexFill
	ix := &sessionIndex{tx: tx, session: session, ss: ss, b: b}
	if sb := tx.nested(bucketLog, key); sb != nil {
		cc := sb.Cursor()
		for ck, v := cc.First(); ck != nil; ck, v = cc.Next() {
			cb := sb.Bucket(ck)
			if len(ck) != 4 || v != nil || cb == nil {
				continue // damage the log's readers report
			}
			cycle, pos := binary.BigEndian.Uint32(ck), 0
			c := cb.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if len(k) != 8 || (v == nil && cb.Bucket(k) != nil) {
					continue
				}
				if err := ix.addMessage(cycle, binary.BigEndian.Uint64(k), pos, v); err != nil {
					return 0, err
				}
				pos++
			}
		}
	}
	for _, kind := range tx.rules.Kinds {
		kb := tx.nested([]byte(kind), key)
		if kb == nil {
			continue
		}
		c := kb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 || (v == nil && kb.Bucket(k) != nil) {
				continue
			}
			if err := ix.addRecord(kind, binary.BigEndian.Uint64(k), v); err != nil {
				return 0, err
			}
		}
	}
	return ix.n, ix.done()
}

// EnsureSearchIndex brings the search index up to date: it builds the
// index when there is none or it was built under other rules or another
// layout, indexes every session the index does not follow (one a Store
// without rules wrote to, or any session after a rebuild), and drops
// sessions that no longer exist. When the index is up to date it only
// reads, and once it has succeeded it returns at once: the Store holds the
// file's lock, so only its own writes, which keep the index, can change
// the data. The work is committed in several Updates of a bounded size; a
// query in between finds the sessions not yet indexed reported as such by
// MatchTexts. It fails on a Store opened without Options.Search and, like
// every Update, on a damaged file.
func (s *Store) EnsureSearchIndex() error { return s.buildSearch(false) }

// RebuildSearchIndex drops the search index and builds it again from the
// logs and records of every session, as EnsureSearchIndex does for an
// index built under other rules. While it runs, MatchTexts compares every
// session with its watermark again, so a query never mistakes a session
// not yet rebuilt for one without texts.
func (s *Store) RebuildSearchIndex() error { return s.buildSearch(true) }

func (s *Store) buildSearch(force bool) error {
	if s.rules == nil {
		return newError(ErrInvalid, nil, "%s was opened without search rules, so it keeps no search index; open it with Options.Search", s.path)
	}
	if !force && s.searchState.Load()&1 == 1 {
		return nil
	}
	s.searchMu.Lock()
	defer s.searchMu.Unlock()
	state := s.searchState.Load()
	if !force && state&1 == 1 {
		return nil
	}
	if force {
		state = (state>>1 + 1) << 1 // readers stop trusting the index
		s.searchState.Store(state)
	}
	var reset bool
	var todo, gone []string
	err := s.View(func(tx *Tx) error {
		reset, todo, gone = tx.searchWork(force)
		return nil
	})
	if err != nil {
		return err
	}
	for first := true; first || len(todo) > 0; first = false {
		if !first || reset || len(gone) > 0 || len(todo) > 0 {
			err = s.Update(func(tx *Tx) error { return tx.buildBatch(first && reset, gone, &todo) })
		}
		if err != nil {
			return err
		}
		gone = nil
	}
	s.searchState.Store(state | 1)
	return nil
}

// searchWork says what EnsureSearchIndex has to do: build the index anew
// (reset, with every session in todo), or index the sessions in todo and
// drop those in gone.
func (tx *Tx) searchWork(force bool) (reset bool, todo, gone []string) {
	ss := tx.searchSessions()
	reset = force || ss == nil
	sb := tx.btx.Bucket(bucketSessions)
	if sb != nil {
		c := sb.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			id := string(k)
			if reset {
				todo = append(todo, id)
				continue
			}
			mark := tx.watermark(id)
			b := ss.Bucket(k)
			if (b == nil && !isZero(mark)) || (b != nil && !bytes.Equal(b.Get(keySearchMark), mark)) {
				todo = append(todo, id)
			}
		}
	}
	if !reset {
		c := ss.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if _, ok := get(sb, k); !ok {
				gone = append(gone, string(k))
			}
		}
	}
	return reset, todo, gone
}

// buildBatch runs one Update of EnsureSearchIndex: it starts a new index
// when reset, drops the sessions in gone and indexes sessions from the
// front of todo until about searchBatchBytes of text are indexed.
func (tx *Tx) buildBatch(reset bool, gone []string, todo *[]string) error {
	if reset {
		if tx.btx.Bucket(bucketSearch) != nil {
			if err := tx.btx.DeleteBucket(bucketSearch); err != nil {
				return tx.writeFailed("RebuildSearchIndex", err)
			}
		}
		mb, err := tx.create(bucketMeta)
		if err == nil {
			err = mb.Put(keySearchVersion, tx.rules.version)
		}
		if err != nil {
			return tx.writeFailed("RebuildSearchIndex", err)
		}
	}
	ss, err := tx.create(bucketSearch)
	if err != nil {
		return tx.writeFailed("EnsureSearchIndex", err)
	}
	for _, id := range gone {
		if ss.Bucket([]byte(id)) != nil {
			if err := ss.DeleteBucket([]byte(id)); err != nil {
				return tx.writeFailed("EnsureSearchIndex", err)
			}
		}
	}
	for n := 0; len(*todo) > 0 && n < searchBatchBytes; *todo = (*todo)[1:] {
		m, err := tx.indexSession(ss, (*todo)[0])
		if err != nil {
			return tx.writeFailed("EnsureSearchIndex", err)
		}
		n += m
	}
	return nil
}

// dropSessionIndex removes the session from the search index.
func (tx *Tx) dropSessionIndex(session string) error {
	ss := tx.btx.Bucket(bucketSearch)
	if ss == nil || ss.Bucket([]byte(session)) == nil {
		return nil
	}
	return ss.DeleteBucket([]byte(session))
}
