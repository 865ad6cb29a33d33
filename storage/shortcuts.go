package storage

// The methods in this file run one Tx operation in a transaction of its own:
// a View for reads, an Update (one commit and fsync) for writes. They have the
// guarantees of the Tx method of the same name.

// PutSession runs Tx.PutSession in its own Update.
func (s *Store) PutSession(sess Session) error {
	return s.Update(func(tx *Tx) error { return tx.PutSession(sess) })
}

// Session runs Tx.Session in its own View.
func (s *Store) Session(id string) (sess Session, err error) {
	err = s.View(func(tx *Tx) error { sess, err = tx.Session(id); return err })
	return sess, err
}

// Sessions runs Tx.Sessions in its own View.
func (s *Store) Sessions() (list []Session, err error) {
	err = s.View(func(tx *Tx) error { list, err = tx.Sessions(); return err })
	return list, err
}

// DeleteSession runs Tx.DeleteSession in its own Update.
func (s *Store) DeleteSession(id string) error {
	return s.Update(func(tx *Tx) error { return tx.DeleteSession(id) })
}

// Append runs Tx.Append in its own Update.
func (s *Store) Append(session string, cycle int, data []byte) (seq uint64, err error) {
	err = s.Update(func(tx *Tx) error { seq, err = tx.Append(session, cycle, data); return err })
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// Log runs Tx.Log in its own View.
func (s *Store) Log(session string, cycle int) (recs []Record, err error) {
	err = s.View(func(tx *Tx) error { recs, err = tx.Log(session, cycle); return err })
	return recs, err
}

// LogRange runs Tx.LogRange in its own View. fn runs inside the transaction
// and must not start another one.
func (s *Store) LogRange(session string, cycle int, fromSeq uint64, fn func(Record) error) error {
	return s.View(func(tx *Tx) error { return tx.LogRange(session, cycle, fromSeq, fn) })
}

// LogLen runs Tx.LogLen in its own View.
func (s *Store) LogLen(session string, cycle int) (n int, err error) {
	err = s.View(func(tx *Tx) error { n, err = tx.LogLen(session, cycle); return err })
	return n, err
}

// ReplaceLog runs Tx.ReplaceLog in its own Update.
func (s *Store) ReplaceLog(session string, cycle int, data [][]byte) error {
	return s.Update(func(tx *Tx) error { return tx.ReplaceLog(session, cycle, data) })
}

// Cycles runs Tx.Cycles in its own View.
func (s *Store) Cycles(session string) (cycles []int, err error) {
	err = s.View(func(tx *Tx) error { cycles, err = tx.Cycles(session); return err })
	return cycles, err
}

// PutBlob runs Tx.PutBlob in its own Update.
func (s *Store) PutBlob(data []byte) (sha string, err error) {
	err = s.Update(func(tx *Tx) error { sha, err = tx.PutBlob(data); return err })
	if err != nil {
		return "", err
	}
	return sha, nil
}

// Blob runs Tx.Blob in its own View.
func (s *Store) Blob(sha string) (data []byte, err error) {
	err = s.View(func(tx *Tx) error { data, err = tx.Blob(sha); return err })
	return data, err
}

// BlobByPrefix runs Tx.BlobByPrefix in its own View.
func (s *Store) BlobByPrefix(prefix string) (data []byte, sha string, err error) {
	err = s.View(func(tx *Tx) error { data, sha, err = tx.BlobByPrefix(prefix); return err })
	return data, sha, err
}

// LoadBlob returns the blob whose SHA-256 is key, or the one blob whose
// SHA-256 begins with key (see BlobByPrefix): the loader of stored texts
// for retrieve_tool_result.
func (s *Store) LoadBlob(key string) ([]byte, error) {
	data, _, err := s.BlobByPrefix(key)
	return data, err
}

// AddRecord runs Tx.AddRecord in its own Update.
func (s *Store) AddRecord(kind Kind, session string, data []byte) (seq uint64, err error) {
	err = s.Update(func(tx *Tx) error { seq, err = tx.AddRecord(kind, session, data); return err })
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// Records runs Tx.Records in its own View.
func (s *Store) Records(kind Kind, session string) (recs []Record, err error) {
	err = s.View(func(tx *Tx) error { recs, err = tx.Records(kind, session); return err })
	return recs, err
}

// LastRecord runs Tx.LastRecord in its own View.
func (s *Store) LastRecord(kind Kind, session string) (rec Record, ok bool, err error) {
	err = s.View(func(tx *Tx) error { rec, ok, err = tx.LastRecord(kind, session); return err })
	return rec, ok, err
}

// PutState runs Tx.PutState in its own Update.
func (s *Store) PutState(session, key string, val []byte) error {
	return s.Update(func(tx *Tx) error { return tx.PutState(session, key, val) })
}

// State runs Tx.State in its own View.
func (s *Store) State(session, key string) (val []byte, err error) {
	err = s.View(func(tx *Tx) error { val, err = tx.State(session, key); return err })
	return val, err
}

// DeleteState runs Tx.DeleteState in its own Update.
func (s *Store) DeleteState(session, key string) error {
	return s.Update(func(tx *Tx) error { return tx.DeleteState(session, key) })
}

// PutSetting runs Tx.PutSetting in its own Update.
func (s *Store) PutSetting(key string, val []byte) error {
	return s.Update(func(tx *Tx) error { return tx.PutSetting(key, val) })
}

// Setting runs Tx.Setting in its own View.
func (s *Store) Setting(key string) (val []byte, err error) {
	err = s.View(func(tx *Tx) error { val, err = tx.Setting(key); return err })
	return val, err
}

// DeleteSetting runs Tx.DeleteSetting in its own Update.
func (s *Store) DeleteSetting(key string) error {
	return s.Update(func(tx *Tx) error { return tx.DeleteSetting(key) })
}
