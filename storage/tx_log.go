package storage

import (
	"encoding/binary"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// The append logs of a session's cycles.

// Append adds data as the next message of the log of the session's cycle and
// returns its sequence number. Sequence numbers are unique within a session
// and each is larger than every sequence the session's log has handed out
// before, in any cycle. The session must exist; otherwise Append returns an
// error wrapping ErrNotFound. Cycles are numbered from 1. The search index
// (see SearchRules) gets the message in the same transaction.
func (tx *Tx) Append(session string, cycle int, data []byte) (seq uint64, err error) {
	const op = "Append"
	if err := tx.begin(op, true); err != nil {
		return 0, err
	}
	defer tx.end(op, true, &err)
	ck, err := cycleKey(op, cycle)
	if err != nil {
		return 0, err
	}
	if err := tx.requireSession(op, session); err != nil {
		return 0, err
	}
	ix, err := tx.sessionIndex(session)
	if err != nil {
		return 0, tx.writeFailed(op, err)
	}
	sb, err := tx.create(bucketLog, []byte(session))
	if err != nil {
		return 0, tx.writeFailed(op, err)
	}
	cb, err := sb.CreateBucketIfNotExists(ck)
	n := 0 // the message's position in the log
	if err == nil {
		n = logLen(cb)
		if seq, err = appendTo(sb, cb, data); err == nil {
			err = setLogLen(cb, n+1)
		}
	}
	if err == nil && ix != nil {
		if err = ix.addMessage(uint32(cycle), seq, n, data); err == nil {
			err = ix.done()
		}
	}
	if err != nil {
		return 0, tx.writeFailed(op, err)
	}
	return seq, nil
}

// Log returns the messages of the session's cycle in sequence order.
func (tx *Tx) Log(session string, cycle int) (recs []Record, err error) {
	err = tx.LogRange(session, cycle, 0, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// LogRange calls fn for each message of the session's cycle whose sequence is
// at least fromSeq, in sequence order, without loading the whole log. If fn
// returns an error, LogRange stops and returns it.
func (tx *Tx) LogRange(session string, cycle int, fromSeq uint64, fn func(Record) error) (err error) {
	const op = "LogRange"
	if err := tx.begin(op, false); err != nil {
		return err
	}
	defer tx.end(op, false, &err)
	ck, err := cycleKey(op, cycle)
	if err != nil {
		return err
	}
	if err := checkKey(op, "session ID", session); err != nil {
		return err
	}
	what := "log of session " + strconv.Quote(session)
	return tx.scan(tx.nested(bucketLog, []byte(session), ck), fromSeq, what, fn)
}

// LogLen returns the number of messages in the log of the session's cycle.
func (tx *Tx) LogLen(session string, cycle int) (n int, err error) {
	const op = "LogLen"
	if err := tx.begin(op, false); err != nil {
		return 0, err
	}
	defer tx.end(op, false, &err)
	ck, err := cycleKey(op, cycle)
	if err != nil {
		return 0, err
	}
	if err := checkKey(op, "session ID", session); err != nil {
		return 0, err
	}
	b := tx.nested(bucketLog, []byte(session), ck)
	if b == nil {
		return 0, nil
	}
	return logLen(b), nil
}

// A log's length is kept in its bucket's sequence, as the length plus
// one, so that LogLen reads one bucket header instead of every page of
// the log (a listing of every session would otherwise read the whole
// file). A sequence of 0 is a log written before lengths were kept: it
// is counted, and the count is kept by the next write.

// logLen returns the number of messages in log bucket b.
func logLen(b *bolt.Bucket) int {
	if seq := b.Sequence(); seq > 0 {
		return int(seq - 1)
	}
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// setLogLen keeps n as the length of log bucket b.
func setLogLen(b *bolt.Bucket, n int) error { return b.SetSequence(uint64(n) + 1) }

// ReplaceLog replaces the log of the session's cycle with data, one message
// per element, in order. It is the only way to rewrite a log. The new
// messages get new sequence numbers, larger than any handed out before, so a
// rewrite is visible to anyone who remembers the old ones. The session must
// exist. The search index drops the cycle's old messages and gets the new
// ones in the same transaction.
func (tx *Tx) ReplaceLog(session string, cycle int, data [][]byte) (err error) {
	const op = "ReplaceLog"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	ck, err := cycleKey(op, cycle)
	if err != nil {
		return err
	}
	if err := tx.requireSession(op, session); err != nil {
		return err
	}
	ix, err := tx.sessionIndex(session)
	if err != nil {
		return tx.writeFailed(op, err)
	}
	sb, err := tx.create(bucketLog, []byte(session))
	if err != nil {
		return tx.writeFailed(op, err)
	}
	if sb.Bucket(ck) != nil {
		if err := sb.DeleteBucket(ck); err != nil {
			return tx.writeFailed(op, err)
		}
	}
	cb, err := sb.CreateBucket(ck)
	if err != nil {
		return tx.writeFailed(op, err)
	}
	if ix != nil {
		if err := ix.dropLog(uint32(cycle)); err != nil {
			return tx.writeFailed(op, err)
		}
	}
	for i, d := range data {
		seq, err := appendTo(sb, cb, d)
		if err == nil && ix != nil {
			err = ix.addMessage(uint32(cycle), seq, i, d)
		}
		if err != nil {
			return tx.writeFailed(op, err)
		}
	}
	if err := setLogLen(cb, len(data)); err != nil {
		return tx.writeFailed(op, err)
	}
	if ix != nil {
		if err := ix.done(); err != nil {
			return tx.writeFailed(op, err)
		}
	}
	return nil
}

// Cycles returns, in ascending order, the cycles of the session that have a
// log, including logs that were replaced with an empty one.
func (tx *Tx) Cycles(session string) (cycles []int, err error) {
	const op = "Cycles"
	if err := tx.begin(op, false); err != nil {
		return nil, err
	}
	defer tx.end(op, false, &err)
	if err := checkKey(op, "session ID", session); err != nil {
		return nil, err
	}
	sb := tx.nested(bucketLog, []byte(session))
	if sb == nil {
		return nil, nil
	}
	c := sb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 4 || v != nil {
			return nil, tx.corrupt("log of session "+strconv.Quote(session), errMalformedKey(k))
		}
		cycles = append(cycles, int(binary.BigEndian.Uint32(k)))
	}
	return cycles, nil
}
