// Package storagetest damages store files for tests of how Tally copes
// with a data file broken past its header.
package storagetest

import (
	"bytes"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DamageLeaf fills a leaf page in the middle of the bbolt file at path
// (never the root or the freelist) with garbage, leaving the header
// intact, and returns the damaged file's bytes. The file needs at least
// ten leaf pages; the test fails otherwise.
func DamageLeaf(t testing.TB, path string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var leaves []int
	_ = db.View(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return nil
			}
			if info.Type == "leaf" {
				leaves = append(leaves, id)
			}
		}
	})
	pageSize := db.Info().PageSize
	db.Close()
	if len(leaves) < 10 {
		t.Fatalf("only %d leaf pages in %s; fill the file more", len(leaves), path)
	}
	leaf := leaves[len(leaves)/2] // one of the many data pages
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[leaf*pageSize:(leaf+1)*pageSize], bytes.Repeat([]byte{0xAB}, pageSize))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}
