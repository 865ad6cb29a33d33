package storage

import (
	"fmt"
	"testing"
)

// LogLen reads the length kept with the log, which every write keeps
// right; a log written before lengths were kept is counted, and its next
// write keeps the count.
func TestLogLenIsKeptByEveryWrite(t *testing.T) {
	s := openTest(t)
	if err := s.Update(func(tx *Tx) error { return tx.PutSession(Session{ID: "s", Cycle: 1}) }); err != nil {
		t.Fatal(err)
	}
	appendN := func(cycle, n int) {
		t.Helper()
		err := s.Update(func(tx *Tx) error {
			for i := range n {
				if _, err := tx.Append("s", cycle, []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := func(cycle, n int) {
		t.Helper()
		if got, err := s.LogLen("s", cycle); err != nil || got != n {
			t.Errorf("LogLen(%d) = %d, %v; want %d", cycle, got, err, n)
		}
		recs, _ := s.Log("s", cycle)
		if len(recs) != n {
			t.Errorf("the log of cycle %d holds %d messages; want %d", cycle, len(recs), n)
		}
	}
	appendN(1, 7)
	want(1, 7)
	appendN(2, 3)
	want(2, 3)
	if err := s.Update(func(tx *Tx) error { return tx.ReplaceLog("s", 1, [][]byte{[]byte(`{}`), []byte(`{}`)}) }); err != nil {
		t.Fatal(err)
	}
	want(1, 2)
	// A rolled-back append leaves the length as it was.
	_ = s.Update(func(tx *Tx) error {
		if _, err := tx.Append("s", 1, []byte(`{}`)); err != nil {
			return err
		}
		return fmt.Errorf("roll back")
	})
	want(1, 2)
	// A log from before lengths were kept (sequence 0) is counted, and
	// its next append keeps the count.
	if err := s.Update(func(tx *Tx) error {
		return tx.btx.Bucket(bucketLog).Bucket([]byte("s")).Bucket(mustCycleKey(2)).SetSequence(0)
	}); err != nil {
		t.Fatal(err)
	}
	want(2, 3)
	appendN(2, 1)
	want(2, 4)
	if err := s.View(func(tx *Tx) error {
		if seq := tx.btx.Bucket(bucketLog).Bucket([]byte("s")).Bucket(mustCycleKey(2)).Sequence(); seq != 5 {
			return fmt.Errorf("kept length %d; want 4 (+1)", seq)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	want(3, 0)
}

func mustCycleKey(c int) []byte {
	k, err := cycleKey("test", c)
	if err != nil {
		panic(err)
	}
	return k
}
