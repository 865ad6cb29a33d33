package filehistory

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A snapshot prepared when the turn started, then a change made outside
// any command, then a command: the command's change is restored to what
// the file held right before it ran, not to what Prepare saw; a file the
// command created is removed; a file nobody touched is not written.
func TestAPreparedSnapshotStillSeesWhatChangedBeforeTheCommand(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "as prepared\n")
	writeFile(t, dir, "sub/b.txt", "b\n")
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	if err := r.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	if err := r.Prepare(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.txt", "edited by hand\n") // outside any command
	ch := shell(t, r, "echo by the command > a.txt && mkdir -p new && echo x > new/c.txt")
	if !slices.Equal(ch.Modified, []string{"a.txt"}) || !slices.Equal(ch.Created, []string{"new/c.txt"}) || len(ch.NotRestorable) != 0 {
		t.Fatalf("changes %+v", ch)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "a.txt"); got != "edited by hand\n" {
		t.Errorf("a.txt restored to %q; want what it held right before the command", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new", "c.txt")); err == nil {
		t.Error("the file the command created was not removed")
	}
	if got := readFile(t, dir, "sub/b.txt"); got != "b\n" {
		t.Errorf("sub/b.txt = %q", got)
	}
}
