package filehistory

import (
	"context"
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
	if err := r.Prepare(context.Background()); err != nil {
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

// A cancelled Prepare leaves nothing half done: the next snapshot walks
// the whole workspace and records a command's change as without it.
func TestACancelledPrepareChangesNothing(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "before\n")
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	if err := r.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Prepare(ctx); err == nil {
		t.Fatal("a cancelled Prepare reported success")
	}
	walked := walks(w)
	ch := shell(t, r, "echo after > a.txt")
	if walks(w) != walked+1 {
		t.Errorf("the snapshot after a cancelled Prepare did not walk the workspace (%d walks, %d before)", walks(w), walked)
	}
	if !slices.Equal(ch.Modified, []string{"a.txt"}) {
		t.Fatalf("changes %+v", ch)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "a.txt"); got != "before\n" {
		t.Errorf("restored %q", got)
	}
}

// A Prepare cancelled while the view is kept up to date by watching (an
// incremental refresh, another recorder of the workspace still open)
// loses no change: a command's change to a file touched meanwhile is still
// restored to what the file held before the command.
func TestACancelledPrepareOnAWatchedViewLosesNothing(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "one\n")
	w := openWS(t, st, dir, Limits{})
	other := recorder(t, w, "other")
	if err := other.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	shell(t, other, "true") // the view is walked and, on Linux, watched
	r := recorder(t, w, "s")
	if err := r.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.txt", "two\n") // seen by the watcher
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	// Cancelled after the wait for the workspace, while refreshing.
	stop := func() error {
		calls++
		if calls > 1 {
			cancel()
		}
		return ctx.Err()
	}
	_ = r.snapshot(nil, stop)
	ch := shell(t, r, "echo three > a.txt")
	if !slices.Equal(ch.Modified, []string{"a.txt"}) || len(ch.Created) != 0 {
		t.Fatalf("changes %+v; want a.txt modified", ch)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "a.txt"); got != "two\n" {
		t.Errorf("a.txt restored to %q; want what it held before the command", got)
	}
}
