// Package golden compares test output with files under testdata/. Run the
// tests with -update to rewrite the files after checking a change; a
// mismatch is also written to testdata/failed/ for review. It is meant to
// be imported by tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Check fails t when got differs from testdata/name.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file %s (run go test with -update): %v", path, err)
	}
	if got != string(want) {
		failed := filepath.Join("testdata", "failed", name)
		_ = os.MkdirAll(filepath.Dir(failed), 0o755)
		_ = os.WriteFile(failed, []byte(got), 0o644)
		t.Errorf("%s differs from the golden file; the output is in %s (run with -update after checking):\n%s", name, failed, got)
	}
}
