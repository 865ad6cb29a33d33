package storage

import (
	"bytes"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestUpdateRollback(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	seq0, _ := s.Append("s", 1, []byte("kept"))
	var blob string
	boom := errors.New("boom")
	err := s.Update(func(tx *Tx) error {
		if err := tx.PutSession(Session{ID: "new"}); err != nil {
			return err
		}
		if _, err := tx.Append("s", 1, []byte("lost")); err != nil {
			return err
		}
		if err := tx.ReplaceLog("s", 1, nil); err != nil {
			return err
		}
		if _, err := tx.AddRecord(KindLedger, "s", []byte("row")); err != nil {
			return err
		}
		if err := tx.PutState("s", "k", []byte("v")); err != nil {
			return err
		}
		if err := tx.PutSetting("k", []byte("v")); err != nil {
			return err
		}
		var err error
		blob, err = tx.PutBlob([]byte("blob"))
		if err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	s = reopen(t, s)
	assertOnly := func() {
		t.Helper()
		if _, err := s.Session("new"); !errors.Is(err, ErrNotFound) {
			t.Errorf("rolled-back session exists: %v", err)
		}
		if recs, _ := s.Log("s", 1); len(recs) != 1 || recs[0].Seq != seq0 {
			t.Errorf("rolled-back log = %v", recs)
		}
		if recs, _ := s.Records(KindLedger, "s"); len(recs) != 0 {
			t.Errorf("rolled-back records = %v", recs)
		}
		if v, _ := s.State("s", "k"); v != nil {
			t.Errorf("rolled-back state = %q", v)
		}
		if v, _ := s.Setting("k"); v != nil {
			t.Errorf("rolled-back setting = %q", v)
		}
		if _, err := s.Blob(blob); !errors.Is(err, ErrNotFound) {
			t.Errorf("rolled-back blob: %v", err)
		}
	}
	assertOnly()

	// A failed write dooms the transaction even if fn ignores the error.
	err = s.Update(func(tx *Tx) error {
		_ = tx.PutSetting("k", []byte("v"))
		_, _ = tx.Append("ghost", 1, nil)
		if err := tx.PutState("s", "k", []byte("v")); err == nil {
			t.Error("write after a failed write succeeded")
		}
		return nil
	})
	wantErr(t, err, ErrNotFound)
	assertOnly()

	// A panic in fn propagates and writes nothing.
	func() {
		defer func() {
			if r := recover(); r != "fn panic" {
				t.Errorf("recovered %v, want fn's panic", r)
			}
		}()
		_ = s.Update(func(tx *Tx) error {
			_ = tx.PutSetting("k", []byte("v"))
			panic("fn panic")
		})
	}()
	assertOnly()

	// A panic in a LogRange callback propagates too.
	func() {
		defer func() {
			if r := recover(); r != "callback panic" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		_ = s.LogRange("s", 1, 0, func(Record) error { panic("callback panic") })
	}()
	if err := s.PutSetting("after", []byte("ok")); err != nil {
		t.Errorf("store unusable after panics: %v", err)
	}
}

func TestViewRejectsWrites(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	var saved *Tx
	err := s.View(func(tx *Tx) error {
		saved = tx
		if tx.Writable() {
			t.Error("View Tx is writable")
		}
		errs := []error{
			tx.PutSession(Session{ID: "x"}),
			tx.DeleteSession("s"),
			tx.ReplaceLog("s", 1, nil),
			tx.PutState("s", "k", nil),
			tx.DeleteState("s", "k"),
			tx.PutSetting("k", nil),
			tx.DeleteSetting("k"),
		}
		_, err := tx.Append("s", 1, nil)
		errs = append(errs, err)
		_, err = tx.PutBlob(nil)
		errs = append(errs, err)
		_, err = tx.AddRecord(KindStatus, "s", nil)
		errs = append(errs, err)
		for i, err := range errs {
			if !errors.Is(err, ErrReadOnly) {
				t.Errorf("write %d in View = %v, want ErrReadOnly", i, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = saved.Session("s")
	wantErr(t, err, ErrTxClosed)
}

func TestDeleteSession(t *testing.T) {
	s := openTest(t)
	var blobs []string
	for _, id := range []string{"a", "b"} {
		mustPutSession(t, s, id)
		err := s.Update(func(tx *Tx) error {
			for c := 1; c <= 3; c++ {
				for i := range 50 {
					if _, err := tx.Append(id, c, bytes.Repeat([]byte(id), 100+i)); err != nil {
						return err
					}
				}
			}
			for _, k := range kinds {
				if _, err := tx.AddRecord(k, id, []byte(id)); err != nil {
					return err
				}
			}
			if err := tx.PutState(id, "checklist", []byte(id)); err != nil {
				return err
			}
			sha, err := tx.PutBlob([]byte("blob of " + id))
			blobs = append(blobs, sha)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSession("a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession("a"); err != nil {
		t.Errorf("deleting a deleted session: %v", err)
	}
	s = reopen(t, s)

	// Nothing keyed by "a" is left in any top-level bucket.
	err := s.db.View(func(btx *bolt.Tx) error {
		return btx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if k, _ := b.Cursor().Seek([]byte("a")); string(k) == "a" {
				t.Errorf("bucket %s still holds session a", name)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Session("a")
	wantErr(t, err, ErrNotFound)
	if c, _ := s.Cycles("a"); len(c) != 0 {
		t.Errorf("Cycles(a) = %v", c)
	}

	// Session b is intact.
	if _, err := s.Session("b"); err != nil {
		t.Error(err)
	}
	for c := 1; c <= 3; c++ {
		if n, _ := s.LogLen("b", c); n != 50 {
			t.Errorf("LogLen(b, %d) = %d", c, n)
		}
	}
	for _, k := range kinds {
		if recs, _ := s.Records(k, "b"); len(recs) != 1 {
			t.Errorf("Records(%s, b) = %v", k, recs)
		}
	}
	if v, _ := s.State("b", "checklist"); string(v) != "b" {
		t.Errorf("State(b) = %q", v)
	}
	// Blobs are shared and stay.
	for _, sha := range blobs {
		if _, err := s.Blob(sha); err != nil {
			t.Errorf("Blob(%s): %v", sha, err)
		}
	}
}

func TestCorruptRecords(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	if _, err := s.Append("s", 1, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	sha, err := s.PutBlob([]byte("content"))
	if err != nil {
		t.Fatal(err)
	}
	// Damage some records behind storage's back.
	err = s.db.Update(func(btx *bolt.Tx) error {
		if err := btx.Bucket(bucketSessions).Put([]byte("bad"), []byte("{not json")); err != nil {
			return err
		}
		cb := btx.Bucket(bucketLog).Bucket([]byte("s")).Bucket(u64Cycle(1))
		if err := cb.Put([]byte("short"), []byte("x")); err != nil {
			return err
		}
		return btx.Bucket(bucketBlobs).Put([]byte(sha), []byte("tampered"))
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Session("bad")
	wantErr(t, err, ErrCorrupt)
	_, err = s.Sessions()
	wantErr(t, err, ErrCorrupt)
	_, err = s.Log("s", 1)
	wantErr(t, err, ErrCorrupt)
	_, err = s.Blob(sha)
	wantErr(t, err, ErrCorrupt)

	// Damage found in an Update dooms it.
	err = s.Update(func(tx *Tx) error {
		_ = tx.PutSetting("k", []byte("v"))
		_, _ = tx.Session("bad")
		return nil
	})
	wantErr(t, err, ErrCorrupt)
	if v, _ := s.Setting("k"); v != nil {
		t.Errorf("doomed Update wrote setting %q", v)
	}
	// Deleting the damaged session repairs the listing.
	if err := s.DeleteSession("bad"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sessions(); err != nil {
		t.Errorf("Sessions after deleting the damaged one: %v", err)
	}
}

func u64Cycle(c int) []byte {
	k, _ := cycleKey("test", c)
	return k
}
