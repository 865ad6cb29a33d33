package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openTest opens a new store in a temporary directory. At cleanup it closes
// the store and checks the file: bbolt's consistency check must pass and the
// file must open again.
func openTest(t testing.TB) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkDB(t, path)
	})
	return s
}

// checkDB runs bbolt's consistency check on the closed database at path and
// opens it again with Open.
func checkDB(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Errorf("reopening %s with bbolt: %v", path, err)
		return
	}
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("bbolt check of %s: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Errorf("bbolt check: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("closing bbolt: %v", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Errorf("reopening %s: %v", path, err)
		return
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after reopen: %v", err)
	}
}

// reopen closes s and opens its file again.
func reopen(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path(), Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	return s2
}

func mustPutSession(t testing.TB, s *Store, id string) Session {
	t.Helper()
	now := time.Now()
	sess := Session{ID: id, Title: "title " + id, Created: now, Updated: now, Cycle: 1}
	if err := s.PutSession(sess); err != nil {
		t.Fatalf("PutSession(%q): %v", id, err)
	}
	return sess
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one matching %v", err, target)
	}
	if strings.HasPrefix(err.Error(), "storage: ") || !strings.Contains(err.Error(), "; ") {
		t.Errorf("error %q is not a sentence saying what to do", err)
	}
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSessionRoundTrip(t *testing.T) {
	s := openTest(t)
	created := time.Date(2025, 3, 1, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	want := Session{
		ID: "s1", Title: "Fix the parser", Workspace: "/src/p", Model: "m-large",
		Created: created, Updated: created.Add(time.Hour), Cycle: 3,
		Extra: json.RawMessage(`{"budget":1000,"tools":["read","write"]}`),
	}
	if err := s.PutSession(want); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	got, err := s.Session("s1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) {
		t.Errorf("times = %v, %v; want %v, %v", got.Created, got.Updated, want.Created, want.Updated)
	}
	got.Created, got.Updated = want.Created, want.Updated
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Session = %+v, want %+v", got, want)
	}

	_, err = s.Session("nope")
	wantErr(t, err, ErrNotFound)
	if !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("error %q does not name the session", err)
	}
	wantErr(t, s.PutSession(Session{}), ErrInvalid)
	wantErr(t, s.PutSession(Session{ID: "x", Extra: json.RawMessage(`{`)}), ErrInvalid)

	// Overwrite.
	want.Title = "renamed"
	if err := s.PutSession(want); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Session("s1"); got.Title != "renamed" {
		t.Errorf("Title after overwrite = %q", got.Title)
	}
}

func TestSessionsOrder(t *testing.T) {
	s := openTest(t)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, x := range []struct {
		id  string
		upd time.Duration
	}{{"c", 1}, {"a", 3}, {"b", 3}, {"d", 2}} {
		if err := s.PutSession(Session{ID: x.id, Updated: base.Add(x.upd * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	if got := strings.Join(ids, ","); got != "a,b,d,c" {
		t.Errorf("Sessions order = %s, want a,b,d,c", got)
	}
}

func TestAppendAndLog(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")

	var seqs []uint64
	for i := range 5 {
		cycle := 1 + i%2
		seq, err := s.Append("s", cycle, []byte(fmt.Sprintf("m%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) > 0 && seq <= seqs[len(seqs)-1] {
			t.Fatalf("sequence %d after %d is not increasing", seq, seqs[len(seqs)-1])
		}
		seqs = append(seqs, seq)
	}

	recs, err := s.Log("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{{seqs[0], []byte("m0")}, {seqs[2], []byte("m2")}, {seqs[4], []byte("m4")}}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("Log(1) = %v, want %v", recs, want)
	}
	if n, err := s.LogLen("s", 2); err != nil || n != 2 {
		t.Errorf("LogLen(2) = %d, %v; want 2", n, err)
	}
	if c, err := s.Cycles("s"); err != nil || !reflect.DeepEqual(c, []int{1, 2}) {
		t.Errorf("Cycles = %v, %v; want [1 2]", c, err)
	}

	// Returned data is a copy.
	recs[0].Data[0] = 'X'
	if again, _ := s.Log("s", 1); string(again[0].Data) != "m0" {
		t.Errorf("modifying a returned record changed the store: %q", again[0].Data)
	}

	// Data passed to Append is copied, even inside the same transaction.
	buf := []byte("original")
	err = s.Update(func(tx *Tx) error {
		_, err := tx.Append("s", 3, buf)
		copy(buf, "CHANGED!")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Log("s", 3); len(recs) != 1 || string(recs[0].Data) != "original" {
		t.Errorf("Log(3) = %v, want the original bytes", recs)
	}

	// LogRange starts at fromSeq and stops on error.
	var got []uint64
	err = s.LogRange("s", 1, seqs[2], func(r Record) error {
		got = append(got, r.Seq)
		return nil
	})
	if err != nil || !reflect.DeepEqual(got, []uint64{seqs[2], seqs[4]}) {
		t.Errorf("LogRange from %d = %v, %v", seqs[2], got, err)
	}
	stop := errors.New("stop")
	n := 0
	err = s.LogRange("s", 1, 0, func(Record) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("LogRange with stopping fn = %v after %d calls", err, n)
	}

	// Unknown sessions and cycles read as empty; writing to them fails.
	if recs, err := s.Log("s", 9); err != nil || len(recs) != 0 {
		t.Errorf("Log of empty cycle = %v, %v", recs, err)
	}
	if recs, err := s.Log("ghost", 1); err != nil || len(recs) != 0 {
		t.Errorf("Log of unknown session = %v, %v", recs, err)
	}
	_, err = s.Append("ghost", 1, nil)
	wantErr(t, err, ErrNotFound)
	_, err = s.Append("s", 0, nil)
	wantErr(t, err, ErrInvalid)
	_, err = s.Log("", 1)
	wantErr(t, err, ErrInvalid)
}

func TestSequencesSurviveReopen(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	last, err := s.Append("s", 1, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	next, err := s.Append("s", 2, []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if next <= last {
		t.Errorf("sequence after reopen = %d, want > %d", next, last)
	}
}

func TestReplaceLog(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	var maxSeq uint64
	for i := range 3 {
		seq, err := s.Append("s", 1, []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		maxSeq = seq
	}
	other, err := s.Append("s", 2, []byte("other cycle"))
	if err != nil {
		t.Fatal(err)
	}
	maxSeq = max(maxSeq, other)

	if err := s.ReplaceLog("s", 1, [][]byte{[]byte("summary"), []byte("tail")}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Log("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0].Data) != "summary" || string(recs[1].Data) != "tail" {
		t.Fatalf("Log after ReplaceLog = %v", recs)
	}
	if recs[0].Seq <= maxSeq || recs[1].Seq <= recs[0].Seq {
		t.Errorf("sequences after ReplaceLog = %d, %d; want increasing and > %d", recs[0].Seq, recs[1].Seq, maxSeq)
	}
	next, err := s.Append("s", 1, []byte("after"))
	if err != nil || next <= recs[1].Seq {
		t.Errorf("Append after ReplaceLog = %d, %v; want > %d", next, err, recs[1].Seq)
	}
	if recs, _ := s.Log("s", 2); len(recs) != 1 || recs[0].Seq != other {
		t.Errorf("ReplaceLog touched another cycle: %v", recs)
	}

	if err := s.ReplaceLog("s", 1, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.LogLen("s", 1); n != 0 {
		t.Errorf("LogLen after empty ReplaceLog = %d", n)
	}
	if c, _ := s.Cycles("s"); !reflect.DeepEqual(c, []int{1, 2}) {
		t.Errorf("Cycles after empty ReplaceLog = %v", c)
	}
	wantErr(t, s.ReplaceLog("ghost", 1, nil), ErrNotFound)
}

func TestBlobs(t *testing.T) {
	s := openTest(t)
	data := bytes.Repeat([]byte("blob "), 1000)
	sum := sha256.Sum256(data)
	sha, err := s.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	if sha != hex.EncodeToString(sum[:]) {
		t.Errorf("PutBlob key = %s, want %x", sha, sum)
	}
	again, err := s.PutBlob(data)
	if err != nil || again != sha {
		t.Errorf("second PutBlob = %s, %v", again, err)
	}
	got, err := s.Blob(sha)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("Blob = %d bytes, %v", len(got), err)
	}
	empty, err := s.PutBlob(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Blob(empty); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty Blob = %v, %v", got, err)
	}
	_, err = s.Blob(strings.Repeat("0", 64))
	wantErr(t, err, ErrNotFound)
	_, err = s.Blob("not-a-hash")
	wantErr(t, err, ErrInvalid)
	_, err = s.Blob(strings.ToUpper(sha))
	wantErr(t, err, ErrInvalid)
}

func TestRecords(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	for _, kind := range []Kind{KindRebuild, KindStatus, KindLedger, KindArchive} {
		if _, ok, err := s.LastRecord(kind, "s"); err != nil || ok {
			t.Errorf("LastRecord(%s) of empty list = %v, %v", kind, ok, err)
		}
		var want []Record
		for i := range 3 {
			data := []byte(fmt.Sprintf("%s-%d", kind, i))
			seq, err := s.AddRecord(kind, "s", data)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) > 0 && seq <= want[len(want)-1].Seq {
				t.Errorf("%s sequence %d is not increasing", kind, seq)
			}
			want = append(want, Record{seq, data})
		}
		got, err := s.Records(kind, "s")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Records(%s) = %v, %v; want %v", kind, got, err, want)
		}
		last, ok, err := s.LastRecord(kind, "s")
		if err != nil || !ok || !reflect.DeepEqual(last, want[2]) {
			t.Errorf("LastRecord(%s) = %v, %v, %v", kind, last, ok, err)
		}
	}
	_, err := s.AddRecord("bogus", "s", nil)
	wantErr(t, err, ErrInvalid)
	_, err = s.Records("bogus", "s")
	wantErr(t, err, ErrInvalid)
	_, _, err = s.LastRecord("", "s")
	wantErr(t, err, ErrInvalid)
	_, err = s.AddRecord(KindLedger, "ghost", nil)
	wantErr(t, err, ErrNotFound)
}

func TestStateAndSettings(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")

	if v, err := s.State("s", "checklist"); v != nil || err != nil {
		t.Errorf("absent State = %v, %v; want nil, nil", v, err)
	}
	if err := s.PutState("s", "checklist", []byte(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutState("s", "empty", []byte{}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if v, err := s.State("s", "checklist"); string(v) != `[1,2]` || err != nil {
		t.Errorf("State = %q, %v", v, err)
	}
	if v, err := s.State("s", "empty"); v == nil || len(v) != 0 || err != nil {
		t.Errorf("empty State = %#v, %v; want a non-nil empty slice", v, err)
	}
	if err := s.DeleteState("s", "checklist"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.State("s", "checklist"); v != nil {
		t.Errorf("State after DeleteState = %q", v)
	}
	wantErr(t, s.PutState("ghost", "k", nil), ErrNotFound)
	wantErr(t, s.PutState("s", "", nil), ErrInvalid)

	if v, err := s.Setting("theme"); v != nil || err != nil {
		t.Errorf("absent Setting = %v, %v; want nil, nil", v, err)
	}
	if err := s.PutSetting("theme", []byte("dark")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Setting("theme"); string(v) != "dark" || err != nil {
		t.Errorf("Setting = %q, %v", v, err)
	}
	if err := s.DeleteSetting("theme"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSetting("theme"); err != nil {
		t.Errorf("second DeleteSetting: %v", err)
	}
	if v, _ := s.Setting("theme"); v != nil {
		t.Errorf("Setting after delete = %q", v)
	}
	wantErr(t, s.PutSetting("", nil), ErrInvalid)
}

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

func TestOpenCreatesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != path {
		t.Errorf("Path = %q, want %q", s.Path(), path)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err = s.View(func(*Tx) error { return nil })
	wantErr(t, err, ErrClosed)
	_, err = s.Append("s", 1, nil)
	wantErr(t, err, ErrClosed)
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("mode of %s = %v, %v; want %v", p, fi.Mode().Perm(), err, want)
			}
		}
	}

	// An empty file, as left by a crash before initialization, is initialized.
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Open(empty, Options{})
	if err != nil {
		t.Fatalf("Open of an empty file: %v", err)
	}
	s.Close()
	checkDB(t, empty)

	_, err = Open("", Options{})
	wantErr(t, err, ErrInvalid)
}

func TestOpenLockedSameProcess(t *testing.T) {
	s := openTest(t)
	start := time.Now()
	s2, err := Open(s.Path(), Options{})
	elapsed := time.Since(start)
	if err == nil {
		s2.Close()
		t.Fatal("second Open succeeded")
	}
	wantErr(t, err, ErrLocked)
	t.Logf("second Open failed after %v: %v", elapsed, err)
	if elapsed > 5*time.Second {
		t.Errorf("second Open took %v", elapsed)
	}
	for _, want := range []string{s.Path(), "--data"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	start = time.Now()
	_, err = Open(s.Path(), Options{Timeout: -1})
	wantErr(t, err, ErrLocked)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Open with negative Timeout took %v", d)
	}
	// The first store is unaffected.
	if err := s.PutSetting("k", []byte("v")); err != nil {
		t.Error(err)
	}
}

func TestOpenNewerFormat(t *testing.T) {
	s := openTest(t)
	path := s.Path()
	if err := s.db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileBytes(t, path)
	_, err := Open(path, Options{})
	wantErr(t, err, ErrNewerFormat)
	if !strings.Contains(err.Error(), "upgrade Tally") {
		t.Errorf("error %q does not tell the user to upgrade", err)
	}
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Error("Open modified a newer-format file")
	}
	// Put the version back so the cleanup check can open the file.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion))
	}); err != nil {
		t.Fatal(err)
	}
}

// assertCorruptUntouched checks that Open refuses path with ErrCorrupt and
// leaves its bytes as they were.
func assertCorruptUntouched(t *testing.T, path string) {
	t.Helper()
	before := fileBytes(t, path)
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatalf("Open of a damaged file succeeded")
	}
	wantErr(t, err, ErrCorrupt)
	t.Logf("%v", err)
	for _, want := range []string{path, "untouched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if !bytes.Equal(before, fileBytes(t, path)) {
		t.Errorf("Open modified the damaged file")
	}
	// The lock was released: a second attempt fails the same way, at once.
	start := time.Now()
	if _, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("second Open = %v, want ErrCorrupt", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("second Open took %v; the file lock was not released", d)
	}
}

func TestOpenGarbage(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"text":   []byte("hello, this is not a database\n"),
		"zeros":  make([]byte, 64<<10),
		"random": pseudoRandom(64 << 10),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".db")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			assertCorruptUntouched(t, path)
		})
	}
}

func pseudoRandom(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// filledDB creates a closed database with enough data to span many pages and
// returns its path and page size.
func filledDB(t *testing.T) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPutSession(t, s, "s")
	err = s.Update(func(tx *Tx) error {
		for i := range 300 {
			if _, err := tx.Append("s", 1, bytes.Repeat([]byte{byte(i)}, 1500)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pageSize := s.db.Info().PageSize
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, pageSize
}

func TestOpenTruncated(t *testing.T) {
	path, pageSize := filledDB(t)
	full := fileBytes(t, path)
	for _, size := range []int{len(full) / 2, 3 * pageSize, 2*pageSize + 100, 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "truncated.db")
			if err := os.WriteFile(p, full[:size], 0o600); err != nil {
				t.Fatal(err)
			}
			assertCorruptUntouched(t, p)
		})
	}
}

func TestOpenDamagedPages(t *testing.T) {
	path, pageSize := filledDB(t)
	full := fileBytes(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m0, err0 := readMeta(f, 0)
	m1, err1 := readMeta(f, int64(pageSize))
	f.Close()
	if err0 != nil || err1 != nil {
		t.Fatal(err0, err1)
	}
	m := m0
	if m1.txid > m0.txid {
		m = m1
	}
	damage := func(t *testing.T, pages ...uint64) string {
		b := bytes.Clone(full)
		for _, pg := range pages {
			copy(b[int(pg)*pageSize:int(pg+1)*pageSize], bytes.Repeat([]byte{0xAB}, pageSize))
		}
		p := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("freelist", func(t *testing.T) { assertCorruptUntouched(t, damage(t, m.freelist)) })
	t.Run("root", func(t *testing.T) { assertCorruptUntouched(t, damage(t, m.root)) })
	freelistAt := int(m.freelist) * pageSize
	editFreelist := func(t *testing.T, edit func(page []byte)) string {
		b := bytes.Clone(full)
		edit(b[freelistAt:])
		p := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ne := binary.NativeEndian
	t.Run("freelist-count", func(t *testing.T) {
		assertCorruptUntouched(t, editFreelist(t, func(pg []byte) {
			ne.PutUint16(pg[10:], 0xFFFF)
			ne.PutUint64(pg[16:], 1<<40)
		}))
	})
	t.Run("freelist-entry", func(t *testing.T) {
		assertCorruptUntouched(t, editFreelist(t, func(pg []byte) {
			ne.PutUint16(pg[10:], 1)
			ne.PutUint64(pg[16:], m.pgid+100)
		}))
	})
	t.Run("all", func(t *testing.T) {
		var all []uint64
		for pg := uint64(2); pg < m.pgid; pg++ {
			all = append(all, pg)
		}
		assertCorruptUntouched(t, damage(t, all...))
	})
}

func TestOpenForeignBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bolt.Tx) error {
		_, err := btx.CreateBucket([]byte("someone-else"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	assertCorruptUntouched(t, path)
}

func TestDefaultPath(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	cases := []struct {
		goos string
		env  map[string]string
		home func() (string, error)
		want string
	}{
		{"linux", map[string]string{"TALLY_DATA": "/data", "XDG_DATA_HOME": "/xdg"}, home, filepath.Join("/data", "tally.db")},
		{"linux", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, filepath.Join("/xdg", "tally", "tally.db")},
		{"linux", map[string]string{"XDG_DATA_HOME": "relative"}, home, filepath.Join("/home/u", ".local", "share", "tally", "tally.db")},
		{"linux", nil, home, filepath.Join("/home/u", ".local", "share", "tally", "tally.db")},
		{"freebsd", nil, home, filepath.Join("/home/u", ".local", "share", "tally", "tally.db")},
		{"darwin", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, filepath.Join("/home/u", "Library", "Application Support", "Tally", "tally.db")},
		{"windows", map[string]string{"AppData": `C:\Users\u\AppData\Roaming`}, noHome, filepath.Join(`C:\Users\u\AppData\Roaming`, "Tally", "tally.db")},
		{"windows", map[string]string{"TALLY_DATA": "/data"}, noHome, filepath.Join("/data", "tally.db")},
		{"windows", nil, home, ""},
		{"linux", nil, noHome, ""},
		{"darwin", nil, noHome, ""},
	}
	for _, c := range cases {
		got, err := defaultPath(c.goos, func(k string) string { return c.env[k] }, c.home)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("defaultPath(%s, %v) = %q, %v; want %q", c.goos, c.env, got, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "TALLY_DATA") {
			t.Errorf("error %q does not suggest TALLY_DATA", err)
		}
	}
	if p, err := DefaultPath(); err != nil || !filepath.IsAbs(p) && os.Getenv("TALLY_DATA") == "" {
		t.Errorf("DefaultPath() = %q, %v", p, err)
	}
}

// TestOpenPanicReleasesLock checks that a panic inside bbolt while opening,
// which loses the *bolt.DB and its mapping of the file, still leaves the
// file unlocked.
func TestOpenPanicReleasesLock(t *testing.T) {
	path, _ := filledDB(t)
	defer func(orig func(string, os.FileMode, *bolt.Options) (*bolt.DB, error)) { boltOpen = orig }(boltOpen)
	boltOpen = func(path string, mode os.FileMode, opts *bolt.Options) (*bolt.DB, error) {
		if _, err := bolt.Open(path, mode, opts); err != nil {
			return nil, err
		}
		panic("injected")
	}
	_, err := Open(path, Options{})
	wantErr(t, err, ErrCorrupt)
	boltOpen = bolt.Open
	s, err := Open(path, Options{Timeout: -1})
	if err != nil {
		t.Fatalf("Open after a panic in bbolt: %v", err)
	}
	s.Close()
	checkDB(t, path)
}

func TestConcurrentUse(t *testing.T) {
	s := openTest(t)
	mustPutSession(t, s, "s")
	const writers, each = 4, 25
	errc := make(chan error, writers+2)
	seqc := make(chan uint64, writers*each)
	done := make(chan struct{})
	go func() { // a reader running alongside the writers
		defer func() { errc <- nil }()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.Log("s", 1); err != nil {
				errc <- err
				return
			}
		}
	}()
	for w := range writers {
		go func() {
			for i := range each {
				seq, err := s.Append("s", 1, []byte(fmt.Sprintf("%d/%d", w, i)))
				if err != nil {
					errc <- err
					return
				}
				seqc <- seq
			}
			errc <- nil
		}()
	}
	for range writers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	close(seqc)
	seen := map[uint64]bool{}
	for seq := range seqc {
		if seen[seq] {
			t.Errorf("sequence %d handed out twice", seq)
		}
		seen[seq] = true
	}
	if n, _ := s.LogLen("s", 1); n != writers*each {
		t.Errorf("LogLen = %d, want %d", n, writers*each)
	}
}

func TestBlobByPrefix(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "tally.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var sha string
	if err := st.Update(func(tx *Tx) error { sha, err = tx.PutBlob([]byte("dropped text")); return err }); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{sha, sha[:MinBlobPrefix], sha[:20]} {
		data, full, err := st.BlobByPrefix(key)
		if err != nil || string(data) != "dropped text" || full != sha {
			t.Errorf("BlobByPrefix(%q) = %q, %q, %v", key, data, full, err)
		}
	}
	if _, _, err := st.BlobByPrefix(sha[:MinBlobPrefix-1]); !errors.Is(err, ErrInvalid) {
		t.Errorf("a short prefix: %v", err)
	}
	if _, _, err := st.BlobByPrefix("000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown prefix: %v", err)
	}
}
