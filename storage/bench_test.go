package storage

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkAppend measures one committed step: a single ~2 KB message per
// Update, including the fsync.
func BenchmarkAppend(b *testing.B) {
	s := openTest(b)
	mustPutSession(b, s, "s")
	msg := bytes.Repeat([]byte("x"), 2048)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := s.Append("s", 1, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReopen measures opening a store that holds 10,000 messages of
// ~2 KB, spread over 10 sessions, and reading one session's log.
func BenchmarkReopen(b *testing.B) {
	const sessions, perSession = 10, 1000
	path := filepath.Join(b.TempDir(), "tally.db")
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	msg := bytes.Repeat([]byte("y"), 2048)
	for i := range sessions {
		id := fmt.Sprintf("session-%02d", i)
		mustPutSession(b, s, id)
		err := s.Update(func(tx *Tx) error {
			for range perSession {
				if _, err := tx.Append(id, 1, msg); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs, err := s.Log("session-05", 1)
		if err != nil || len(recs) != perSession {
			b.Fatalf("Log = %d records, %v", len(recs), err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
