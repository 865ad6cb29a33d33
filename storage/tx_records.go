package storage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
)

// Blobs, audit record lists and per-session state values.

// PutBlob stores data under the lowercase hex SHA-256 of its content and
// returns that key. Storing the same content again writes nothing.
func (tx *Tx) PutBlob(data []byte) (sha string, err error) {
	const op = "PutBlob"
	if err := tx.begin(op, true); err != nil {
		return "", err
	}
	defer tx.end(op, true, &err)
	sum := sha256.Sum256(data)
	sha = hex.EncodeToString(sum[:])
	b, err := tx.create(bucketBlobs)
	if err != nil {
		return "", tx.writeFailed(op, err)
	}
	if _, ok := get(b, []byte(sha)); ok {
		return sha, nil
	}
	if err := b.Put([]byte(sha), clone(data)); err != nil {
		return "", tx.writeFailed(op, err)
	}
	return sha, nil
}

// Blob returns the content stored under sha, a key returned by PutBlob. It
// returns an error wrapping ErrNotFound if there is none and one wrapping
// ErrCorrupt if the stored content no longer matches its hash.
func (tx *Tx) Blob(sha string) (data []byte, err error) {
	const op = "Blob"
	if err := tx.begin(op, false); err != nil {
		return nil, err
	}
	defer tx.end(op, false, &err)
	if len(sha) != 2*sha256.Size || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, newError(ErrInvalid, nil, "Blob with key %q; pass the lowercase hex SHA-256 returned by PutBlob", sha)
	}
	v, ok := get(tx.btx.Bucket(bucketBlobs), []byte(sha))
	if !ok {
		return nil, newError(ErrNotFound, nil, "blob %s not found; store it with PutBlob first", sha)
	}
	sum := sha256.Sum256(v)
	if hex.EncodeToString(sum[:]) != sha {
		return nil, newError(ErrCorrupt, nil, "blob %s in %s does not match its hash; restore a backup", sha, tx.path)
	}
	return clone(v), nil
}

// MinBlobPrefix is the fewest hex digits BlobByPrefix accepts.
const MinBlobPrefix = 12

// BlobByPrefix returns the content and the full key of the one blob whose
// SHA-256 key starts with prefix, at least MinBlobPrefix lowercase hex
// digits (a full key works too). It returns an error wrapping ErrNotFound
// when no key starts so, and one wrapping ErrInvalid when several do.
func (tx *Tx) BlobByPrefix(prefix string) (data []byte, sha string, err error) {
	if len(prefix) == 2*sha256.Size {
		sha = prefix
	} else if sha, err = tx.blobKey(prefix); err != nil {
		return nil, "", err
	}
	data, err = tx.Blob(sha)
	return data, sha, err
}

// blobKey returns the one blob key that starts with prefix.
func (tx *Tx) blobKey(prefix string) (sha string, err error) {
	const op = "BlobByPrefix"
	if err := tx.begin(op, false); err != nil {
		return "", err
	}
	defer tx.end(op, false, &err)
	if len(prefix) < MinBlobPrefix || len(prefix) > 2*sha256.Size || strings.Trim(prefix, "0123456789abcdef") != "" {
		return "", newError(ErrInvalid, nil, "blob prefix %q; pass %d to 64 lowercase hex digits of a SHA-256", prefix, MinBlobPrefix)
	}
	notFound := newError(ErrNotFound, nil, "no blob starts with %s", prefix)
	b := tx.btx.Bucket(bucketBlobs)
	if b == nil {
		return "", notFound
	}
	c := b.Cursor()
	k, _ := c.Seek([]byte(prefix))
	if k == nil || !strings.HasPrefix(string(k), prefix) {
		return "", notFound
	}
	sha = string(k)
	if next, _ := c.Next(); next != nil && strings.HasPrefix(string(next), prefix) {
		return "", newError(ErrInvalid, nil, "several blobs start with %s; give more digits", prefix)
	}
	return sha, nil
}

// AddRecord appends data to the session's list of the given kind and returns
// its sequence number, which is larger than any returned before for that
// list. The session must exist. When kind is one of SearchRules.Kinds, the
// search index gets the record's texts in the same transaction.
func (tx *Tx) AddRecord(kind Kind, session string, data []byte) (seq uint64, err error) {
	const op = "AddRecord"
	if err := tx.begin(op, true); err != nil {
		return 0, err
	}
	defer tx.end(op, true, &err)
	if err := checkKind(op, kind); err != nil {
		return 0, err
	}
	if err := tx.requireSession(op, session); err != nil {
		return 0, err
	}
	var ix *sessionIndex
	if tx.rules.indexes(kind) {
		if ix, err = tx.sessionIndex(session); err != nil {
			return 0, tx.writeFailed(op, err)
		}
	}
	b, err := tx.create([]byte(kind), []byte(session))
	if err == nil {
		seq, err = appendTo(b, b, data)
	}
	if err == nil && ix != nil {
		if err = ix.addRecord(kind, seq, data); err == nil {
			err = ix.done()
		}
	}
	if err != nil {
		return 0, tx.writeFailed(op, err)
	}
	return seq, nil
}

// Records returns the session's list of the given kind in sequence order.
func (tx *Tx) Records(kind Kind, session string) (recs []Record, err error) {
	const op = "Records"
	if err := tx.begin(op, false); err != nil {
		return nil, err
	}
	defer tx.end(op, false, &err)
	if err := checkKind(op, kind); err != nil {
		return nil, err
	}
	if err := checkKey(op, "session ID", session); err != nil {
		return nil, err
	}
	what := string(kind) + " records of session " + strconv.Quote(session)
	err = tx.scan(tx.nested([]byte(kind), []byte(session)), 0, what, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// LastRecord returns the last record of the session's list of the given kind
// and true, or false if the list is empty.
func (tx *Tx) LastRecord(kind Kind, session string) (rec Record, ok bool, err error) {
	const op = "LastRecord"
	if err := tx.begin(op, false); err != nil {
		return Record{}, false, err
	}
	defer tx.end(op, false, &err)
	if err := checkKind(op, kind); err != nil {
		return Record{}, false, err
	}
	if err := checkKey(op, "session ID", session); err != nil {
		return Record{}, false, err
	}
	b := tx.nested([]byte(kind), []byte(session))
	if b == nil {
		return Record{}, false, nil
	}
	k, v := b.Cursor().Last()
	if k == nil {
		return Record{}, false, nil
	}
	if len(k) != 8 || (v == nil && b.Bucket(k) != nil) {
		return Record{}, false, tx.corrupt(string(kind)+" records of session "+strconv.Quote(session), errMalformedKey(k))
	}
	return Record{Seq: binary.BigEndian.Uint64(k), Data: clone(v)}, true, nil
}

// PutState sets the session's state value named key to a copy of val. The
// session must exist.
func (tx *Tx) PutState(session, key string, val []byte) (err error) {
	const op = "PutState"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "state key", key); err != nil {
		return err
	}
	if err := tx.requireSession(op, session); err != nil {
		return err
	}
	b, err := tx.create(bucketState, []byte(session))
	if err == nil {
		err = b.Put([]byte(key), clone(val))
	}
	if err != nil {
		return tx.writeFailed(op, err)
	}
	return nil
}

// State returns the session's state value named key, or nil and no error if
// it is not set. A value set to an empty slice is returned as a non-nil empty
// slice.
func (tx *Tx) State(session, key string) (val []byte, err error) {
	const op = "State"
	if err := tx.begin(op, false); err != nil {
		return nil, err
	}
	defer tx.end(op, false, &err)
	if err := checkKey(op, "session ID", session); err != nil {
		return nil, err
	}
	if err := checkKey(op, "state key", key); err != nil {
		return nil, err
	}
	v, ok := get(tx.nested(bucketState, []byte(session)), []byte(key))
	if !ok {
		return nil, nil
	}
	return clone(v), nil
}

// DeleteState removes the session's state value named key. Removing a value
// that is not set is not an error.
func (tx *Tx) DeleteState(session, key string) (err error) {
	const op = "DeleteState"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "session ID", session); err != nil {
		return err
	}
	if err := checkKey(op, "state key", key); err != nil {
		return err
	}
	if b := tx.nested(bucketState, []byte(session)); b != nil {
		if err := b.Delete([]byte(key)); err != nil {
			return tx.writeFailed(op, err)
		}
	}
	return nil
}

// PutSetting sets the global setting key to a copy of val.
func (tx *Tx) PutSetting(key string, val []byte) (err error) {
	const op = "PutSetting"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "setting key", key); err != nil {
		return err
	}
	b, err := tx.create(bucketSettings)
	if err == nil {
		err = b.Put([]byte(key), clone(val))
	}
	if err != nil {
		return tx.writeFailed(op, err)
	}
	return nil
}

// Setting returns the global setting key, or nil and no error if it is not
// set. A value set to an empty slice is returned as a non-nil empty slice.
func (tx *Tx) Setting(key string) (val []byte, err error) {
	const op = "Setting"
	if err := tx.begin(op, false); err != nil {
		return nil, err
	}
	defer tx.end(op, false, &err)
	if err := checkKey(op, "setting key", key); err != nil {
		return nil, err
	}
	v, ok := get(tx.btx.Bucket(bucketSettings), []byte(key))
	if !ok {
		return nil, nil
	}
	return clone(v), nil
}

// DeleteSetting removes the global setting key. Removing a setting that is not
// set is not an error.
func (tx *Tx) DeleteSetting(key string) (err error) {
	const op = "DeleteSetting"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "setting key", key); err != nil {
		return err
	}
	if b := tx.btx.Bucket(bucketSettings); b != nil {
		if err := b.Delete([]byte(key)); err != nil {
			return tx.writeFailed(op, err)
		}
	}
	return nil
}
