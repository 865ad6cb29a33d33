package storage

import (
	"bytes"
	"errors"
	"testing"
)

func TestCheckpointValues(t *testing.T) {
	s := openTest(t)
	err := s.Update(func(tx *Tx) error {
		for _, k := range []string{"b", "a", "c"} {
			if err := tx.PutCheckpoint("ws1", "blob", k, []byte("value "+k)); err != nil {
				return err
			}
		}
		return tx.PutCheckpoint("ws2", "blob", "a", []byte("other"))
	})
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	err = s.Update(func(tx *Tx) error {
		v, ok, err := tx.Checkpoint("ws1", "blob", "a")
		if err != nil || !ok || string(v) != "value a" {
			t.Fatalf("Checkpoint = %q, %v, %v", v, ok, err)
		}
		if _, ok, _ := tx.Checkpoint("ws1", "meta", "a"); ok {
			t.Fatal("a missing section must read as empty")
		}
		var keys []string
		var total int
		if err := tx.CheckpointSizes("ws1", "blob", func(k string, n int) error {
			keys = append(keys, k)
			total += n
			return nil
		}); err != nil {
			return err
		}
		if len(keys) != 3 || keys[0] != "a" || keys[2] != "c" || total != 21 {
			t.Fatalf("sizes: %v %d", keys, total)
		}
		if err := tx.DeleteCheckpoint("ws1", "blob", "b"); err != nil {
			return err
		}
		if err := tx.DeleteCheckpoint("ws1", "blob", "nothing"); err != nil {
			return err
		}
		return tx.DeleteCheckpointNamespace("ws2")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		if ok, _ := tx.HasCheckpoint("ws1", "blob", "b"); ok {
			t.Fatal("deleted value still there")
		}
		if ok, _ := tx.HasCheckpoint("ws2", "blob", "a"); ok {
			t.Fatal("deleted namespace still there")
		}
		var got [][]byte
		err := tx.CheckpointValues("ws1", "blob", func(_ string, v []byte) error {
			got = append(got, v)
			return nil
		})
		if err != nil || len(got) != 2 || !bytes.Equal(got[1], []byte("value c")) {
			t.Fatalf("values %q, %v", got, err)
		}
		stop := errors.New("stop")
		if err := tx.CheckpointValues("ws1", "blob", func(string, []byte) error { return stop }); err != stop {
			t.Fatalf("callback error = %v", err)
		}
		return tx.PutCheckpoint("ws1", "blob", "x", nil)
	})
	wantErr(t, err, ErrReadOnly)
	err = s.Update(func(tx *Tx) error { return tx.PutCheckpoint("", "blob", "x", nil) })
	wantErr(t, err, ErrInvalid)
}
