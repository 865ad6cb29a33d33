package longsession

import (
	"path/filepath"
	"testing"

	"github.com/tally-dev/tally/storage"
)

func TestSeedStoresTheMessagesAsked(t *testing.T) {
	dir := t.TempDir()
	id, err := Seed(dir, t.TempDir(), 42)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.LogLen(id, 1); err != nil || n != 42 {
		t.Fatalf("the seeded log holds %d messages (%v); want 42", n, err)
	}
}
