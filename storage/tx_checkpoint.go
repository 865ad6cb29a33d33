package storage

// Checkpoint data: opaque values in named sections of named namespaces, kept
// in a top-level bucket of their own. Unlike blobs, checkpoint values can be
// deleted, so the engine can bound their total size. Storage gives the names
// no meaning; the engine uses one namespace per workspace.

var bucketCheckpoints = []byte("checkpoints")

// PutCheckpoint stores a copy of value under key in the given section of
// namespace ns, replacing any value there. ns, section and key must be
// non-empty and at most bbolt's maximum key size.
func (tx *Tx) PutCheckpoint(ns, section, key string, value []byte) (err error) {
	const op = "PutCheckpoint"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkCheckpointKeys(op, ns, section, key); err != nil {
		return err
	}
	b, err := tx.create(bucketCheckpoints, []byte(ns), []byte(section))
	if err == nil {
		err = b.Put([]byte(key), clone(value))
	}
	if err != nil {
		return tx.writeFailed(op, err)
	}
	return nil
}

// Checkpoint returns a copy of the value under key in the given section of
// namespace ns, and whether there is one.
func (tx *Tx) Checkpoint(ns, section, key string) (value []byte, ok bool, err error) {
	const op = "Checkpoint"
	if err := tx.begin(op, false); err != nil {
		return nil, false, err
	}
	defer tx.end(op, false, &err)
	if err := checkCheckpointKeys(op, ns, section, key); err != nil {
		return nil, false, err
	}
	v, ok := get(tx.nested(bucketCheckpoints, []byte(ns), []byte(section)), []byte(key))
	if !ok {
		return nil, false, nil
	}
	return clone(v), true, nil
}

// HasCheckpoint reports whether there is a value under key in the given
// section of namespace ns, without copying it.
func (tx *Tx) HasCheckpoint(ns, section, key string) (ok bool, err error) {
	const op = "HasCheckpoint"
	if err := tx.begin(op, false); err != nil {
		return false, err
	}
	defer tx.end(op, false, &err)
	if err := checkCheckpointKeys(op, ns, section, key); err != nil {
		return false, err
	}
	_, ok = get(tx.nested(bucketCheckpoints, []byte(ns), []byte(section)), []byte(key))
	return ok, nil
}

// DeleteCheckpoint removes the value under key in the given section of
// namespace ns. Deleting a missing value is not an error.
func (tx *Tx) DeleteCheckpoint(ns, section, key string) (err error) {
	const op = "DeleteCheckpoint"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkCheckpointKeys(op, ns, section, key); err != nil {
		return err
	}
	b := tx.nested(bucketCheckpoints, []byte(ns), []byte(section))
	if b == nil {
		return nil
	}
	if _, ok := get(b, []byte(key)); !ok {
		return nil
	}
	if err := b.Delete([]byte(key)); err != nil {
		return tx.writeFailed(op, err)
	}
	return nil
}

// CheckpointSizes calls fn with each key of the given section of namespace ns
// and the length of its value, in key order, without copying the values. It
// stops at and returns the first error from fn.
func (tx *Tx) CheckpointSizes(ns, section string, fn func(key string, size int) error) error {
	return tx.scanCheckpoints("CheckpointSizes", ns, section, func(k, v []byte) error { return fn(string(k), len(v)) })
}

// CheckpointValues calls fn with each key of the given section of namespace
// ns and a copy of its value, in key order. It stops at and returns the
// first error from fn.
func (tx *Tx) CheckpointValues(ns, section string, fn func(key string, value []byte) error) error {
	return tx.scanCheckpoints("CheckpointValues", ns, section, func(k, v []byte) error { return fn(string(k), clone(v)) })
}

func (tx *Tx) scanCheckpoints(op, ns, section string, fn func(k, v []byte) error) (err error) {
	if err := tx.begin(op, false); err != nil {
		return err
	}
	defer tx.end(op, false, &err)
	if err := checkCheckpointKeys(op, ns, section, "-"); err != nil {
		return err
	}
	b := tx.nested(bucketCheckpoints, []byte(ns), []byte(section))
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil && b.Bucket(k) != nil {
			return tx.corrupt("checkpoint section "+section, errMalformedKey(k))
		}
		tx.callback = true
		err := fn(k, v)
		tx.callback = false
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteCheckpointNamespace removes namespace ns and all its sections.
// Deleting a missing namespace is not an error.
func (tx *Tx) DeleteCheckpointNamespace(ns string) (err error) {
	const op = "DeleteCheckpointNamespace"
	if err := tx.begin(op, true); err != nil {
		return err
	}
	defer tx.end(op, true, &err)
	if err := checkKey(op, "checkpoint namespace", ns); err != nil {
		return err
	}
	b := tx.btx.Bucket(bucketCheckpoints)
	if b == nil || b.Bucket([]byte(ns)) == nil {
		return nil
	}
	if err := b.DeleteBucket([]byte(ns)); err != nil {
		return tx.writeFailed(op, err)
	}
	return nil
}

func checkCheckpointKeys(op, ns, section, key string) error {
	if err := checkKey(op, "checkpoint namespace", ns); err != nil {
		return err
	}
	if err := checkKey(op, "checkpoint section", section); err != nil {
		return err
	}
	return checkKey(op, "checkpoint key", key)
}
