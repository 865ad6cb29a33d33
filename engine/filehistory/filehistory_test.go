package filehistory

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// seedWorkspace fills dir with the files of the scripted session and a tree
// of 1,000 files the session never touches.
func seedWorkspace(t *testing.T, dir string) {
	writeFile(t, dir, "a.txt", "alpha\none\ntwo\n")
	writeFile(t, dir, "src/b.go", "package b\n\nfunc B() int { return 1 }\n")
	writeFile(t, dir, "gone.txt", "delete me\n")
	writeFile(t, dir, "old/name.txt", "rename me\n")
	writeFile(t, dir, "bin.dat", "\x00\x01\x02binary")
	for i := range 1000 {
		writeFile(t, dir, fmt.Sprintf("tree/d%02d/f%04d.txt", i%20, i), fmt.Sprintf("untouched file %d\n", i))
	}
}

// runScript is the scripted session: turn 1 edits two files and creates
// one, turn 2 edits one again, deletes one with rm and renames one with mv.
func runScript(t *testing.T, r *Recorder) {
	if err := r.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	agentWrite(t, r, "a.txt", "alpha\nONE\ntwo\n")
	agentWrite(t, r, "src/b.go", "package b\n\nfunc B() int { return 2 }\n")
	agentWrite(t, r, "new/created.txt", "brand new\n")
	if err := r.BeginTurn(2); err != nil {
		t.Fatal(err)
	}
	agentWrite(t, r, "a.txt", "alpha\nONE\nTWO\n")
	ch := shell(t, r, "rm gone.txt")
	if !slices.Equal(ch.Deleted, []string{"gone.txt"}) || len(ch.Created)+len(ch.Modified) != 0 {
		t.Fatalf("rm: %+v", ch)
	}
	ch = shell(t, r, "mv old/name.txt renamed.txt && printf 'x' >> bin.dat")
	if !slices.Equal(ch.Deleted, []string{"old/name.txt"}) || !slices.Equal(ch.Created, []string{"renamed.txt"}) || !slices.Equal(ch.Modified, []string{"bin.dat"}) {
		t.Fatalf("mv: %+v", ch)
	}
}

func TestRestoreTurnOneByteForByte(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	seedWorkspace(t, dir)
	start := treeState(t, dir)

	r := recorder(t, openWS(t, st, dir, Limits{}), "s1")
	runScript(t, r)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	// Restore in what is, for the store, a new process.
	st = reopenStore(t, st)
	w := openWS(t, st, dir, Limits{})
	plan, err := w.Plan("s1", 1)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]Action{}
	for _, f := range plan.Files {
		actions[f.Path] = f.Action
		if f.Conflict {
			t.Errorf("%s: unexpected conflict", f.Path)
		}
	}
	want := map[string]Action{
		"a.txt": Rewrite, "src/b.go": Rewrite, "new/created.txt": Remove,
		"gone.txt": Recreate, "old/name.txt": Recreate, "renamed.txt": Remove, "bin.dat": Rewrite,
	}
	if !maps.Equal(actions, want) {
		t.Fatalf("plan actions = %v, want %v", actions, want)
	}
	for _, f := range plan.Files {
		if f.Path == "a.txt" && !strings.Contains(f.Diff.Unified(), "-TWO\n-ONE\n") && !strings.Contains(f.Diff.Unified(), "+one") {
			t.Errorf("a.txt diff does not go back to the checkpoint:\n%s", f.Diff.Unified())
		}
	}
	res, err := w.Restore(plan, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 7 || len(res.Skipped) != 0 {
		t.Fatalf("result %+v", res)
	}
	end := treeState(t, dir)
	for p, s := range start {
		e, ok := end[p]
		switch {
		case !ok:
			t.Errorf("%s missing after restore", p)
		case e.sum != s.sum || e.mode != s.mode:
			t.Errorf("%s differs after restore", p)
		case want[p] == "" && e.mtime != s.mtime:
			t.Errorf("%s was written although the session never touched it", p)
		}
	}
	for p := range end {
		if _, ok := start[p]; !ok {
			t.Errorf("%s left behind after restore", p)
		}
	}
}

func TestRestoreLaterTurnKeepsEarlierChanges(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	seedWorkspace(t, dir)
	r := recorder(t, openWS(t, st, dir, Limits{}), "s1")
	runScript(t, r)
	plan, err := r.Workspace().Plan("s1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Workspace().Restore(plan, false); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "a.txt"); got != "alpha\nONE\ntwo\n" {
		t.Fatalf("a.txt = %q, want its state at the start of turn 2", got)
	}
	if got := readFile(t, dir, "new/created.txt"); got != "brand new\n" {
		t.Fatal("a file created in turn 1 must survive a rewind to turn 2")
	}
	if got := readFile(t, dir, "old/name.txt"); got != "rename me\n" {
		t.Fatal("the renamed file must be back")
	}
	if _, err := os.Stat(filepath.Join(dir, "renamed.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the rename's target must be gone")
	}
}

func TestConflictNeedsForce(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "f.txt", "original\n")
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	if err := r.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	agentWrite(t, r, "f.txt", "agent\n")
	writeFile(t, dir, "f.txt", "agent\nuser edit\n")

	plan, err := w.Plan("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	f := plan.Files[0]
	if !f.Conflict || f.Agent.Same(f.Current) || !strings.Contains(f.Outside.Unified(), "+user edit") {
		t.Fatalf("want a conflict showing the user's edit: %+v\n%s", f, f.Outside.Unified())
	}
	if _, err := w.Restore(plan, false); !errors.Is(err, ErrConflict) {
		t.Fatalf("Restore without force: %v, want ErrConflict", err)
	}
	if got := readFile(t, dir, "f.txt"); got != "agent\nuser edit\n" {
		t.Fatalf("the user's edit was overwritten without force: %q", got)
	}
	if _, err := w.Restore(plan, true); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "f.txt"); got != "original\n" {
		t.Fatalf("forced restore gave %q", got)
	}
	// The restore itself is Tally's write: no conflict afterwards.
	plan, _ = w.Plan("s", 1)
	if len(plan.Conflicts()) != 0 || plan.Files[0].Action != Unchanged {
		t.Fatalf("after restore: %+v", plan.Files)
	}
}

func TestRestoreRefusesStalePlan(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "f.txt", "one\n")
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	agentWrite(t, r, "f.txt", "two\n")
	plan, _ := w.Plan("s", 1)
	writeFile(t, dir, "f.txt", "three\n")
	if _, err := w.Restore(plan, true); err == nil || !strings.Contains(err.Error(), "plan the restore again") {
		t.Fatalf("Restore of a stale plan: %v", err)
	}
	if got := readFile(t, dir, "f.txt"); got != "three\n" {
		t.Fatal("a stale plan must write nothing")
	}
}

func TestGitRepoUntouched(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "tracked.txt", "v1\n")
	writeFile(t, dir, ".gitignore", "build/\n")
	writeFile(t, dir, "build/out.bin", "artifact")
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	writeFile(t, dir, "tracked.txt", "v2 uncommitted\n")
	git(t, dir, "add", "tracked.txt") // a staged change, which must stay staged

	status := git(t, dir, "status", "--porcelain")
	gitDir := treeState(t, filepath.Join(dir, ".git"))

	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	agentWrite(t, r, "notes.txt", "new\n")
	shell(t, r, "echo more >> notes.txt && echo x > build/out.bin")
	plan, err := w.Plan("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Restore(plan, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("notes.txt should be removed")
	}
	if after := treeState(t, filepath.Join(dir, ".git")); !maps.Equal(after, gitDir) {
		t.Fatal("checkpointing changed files under .git")
	}
	if after := git(t, dir, "status", "--porcelain"); after != status {
		t.Fatalf("git status changed:\n%s\nwant\n%s", after, status)
	}
	if got := readFile(t, dir, "build/out.bin"); got != "x\n" {
		t.Fatal("an ignored file must not be restored")
	}
}

func TestGitignoreAndNested(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, ".gitignore", "*.log\nbuild/\n")
	writeFile(t, dir, "sub/.gitignore", "secret.txt\n")
	writeFile(t, dir, "sub/secret.txt", "s")
	writeFile(t, dir, "sub/kept.txt", "k")
	writeFile(t, dir, "app.log", "l")
	writeFile(t, dir, "build/x.o", "o")
	r := recorder(t, openWS(t, st, dir, Limits{}), "s")
	_ = r.BeginTurn(1)
	ch := shell(t, r, "echo 1 >> sub/secret.txt; echo 1 >> sub/kept.txt; echo 1 >> app.log; echo 1 >> build/x.o; echo 1 > build/new.o")
	if !slices.Equal(ch.Modified, []string{"sub/kept.txt"}) || len(ch.Created)+len(ch.Deleted) != 0 {
		t.Fatalf("changes %+v; only sub/kept.txt is not ignored", ch)
	}
	if listed(r.Workspace(), "sub/secret.txt") {
		t.Fatal("a file ignored by a nested .gitignore was scanned")
	}
}

func TestTouchIsNoChange(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "f.txt", "same\n")
	r := recorder(t, openWS(t, st, dir, Limits{}), "s")
	_ = r.BeginTurn(1)
	if ch := shell(t, r, "touch -d '2001-01-01' f.txt && cp f.txt g && mv g f.txt"); len(ch.Modified)+len(ch.Created)+len(ch.Deleted) != 0 {
		t.Fatalf("content did not change, but got %+v", ch)
	}
}

func TestOddFiles(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "outside the workspace")
	writeFile(t, dir, "ok.txt", "fine\n")
	writeFile(t, dir, "locked.txt", "no read\n")
	if err := os.Chmod(filepath.Join(dir, "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "locked.txt"), 0o644)
	for _, l := range [][2]string{{outside, "out"}, {"ok.txt", "link.txt"}, {"missing", "dangling"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Log("no FIFO:", err)
	}
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	// A write through a link that leaves the workspace records nothing of
	// the outside file.
	if err := r.BeforeWrite("out/secret.txt"); err != nil {
		t.Fatal(err)
	}
	if err := r.BeforeWrite("pipe"); err != nil {
		t.Fatal(err)
	}
	if err := r.BeforeWrite("../escape"); err == nil {
		t.Fatal("a path outside the workspace must be refused")
	}
	ch := shell(t, r, "ln -sfn ok.txt dangling && rm link.txt")
	if !slices.Equal(ch.Modified, []string{"dangling"}) || !slices.Equal(ch.Deleted, []string{"link.txt"}) {
		t.Fatalf("link changes: %+v", ch)
	}
	plan, err := w.Plan("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Files {
		if f.Path == "out/secret.txt" && (f.Target.Kind == File || f.Action != NotRestorable) {
			t.Fatalf("the outside file was recorded: %+v", f)
		}
	}
	if _, err := w.Restore(plan, false); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"dangling": "missing", "link.txt": "ok.txt"} {
		if got, err := os.Readlink(filepath.Join(dir, link)); err != nil || got != target {
			t.Fatalf("%s -> %q, %v; want a link to %s", link, got, err, target)
		}
	}
	if got := readFile(t, outside, "secret.txt"); got != "outside the workspace" {
		t.Fatal("a file outside the workspace was written")
	}
}

func TestLargeFileNotRestorable(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "big.bin", strings.Repeat("x", 2048))
	w := openWS(t, st, dir, Limits{FileBytes: 1024})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	ch := shell(t, r, "echo y >> big.bin")
	if !slices.Equal(ch.NotRestorable, []string{"big.bin"}) || !slices.Equal(ch.Modified, []string{"big.bin"}) {
		t.Fatalf("%+v", ch)
	}
	plan, _ := w.Plan("s", 1)
	if len(plan.Files) != 1 || plan.Files[0].Action != NotRestorable || !strings.Contains(plan.Files[0].Why, "larger than") {
		t.Fatalf("%+v", plan.Files)
	}
}

func TestBeginTurnRewindDiscardsLaterTurns(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	for turn := 1; turn <= 4; turn++ {
		_ = r.BeginTurn(turn)
		agentWrite(t, r, "f.txt", fmt.Sprint(turn))
	}
	if err := r.BeginTurn(3); err != nil {
		t.Fatal(err)
	}
	if turns, _ := w.Turns("s"); !slices.Equal(turns, []int{1, 2, 3}) {
		t.Fatalf("turns %v", turns)
	}
	plan, _ := w.Plan("s", 3)
	if len(plan.Files) != 0 {
		t.Fatalf("turn 3 was superseded and has no changes yet: %+v", plan.Files)
	}
}

func TestChangesAndRevertFile(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "a1\n")
	writeFile(t, dir, "b.txt", "b1\n")
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	agentWrite(t, r, "a.txt", "a2\n")
	_ = r.BeginTurn(2)
	agentWrite(t, r, "b.txt", "b2\n")
	agentWrite(t, r, "a.txt", "a3\n")
	changes, err := w.Changes("s")
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Path != "a.txt" || changes[0].Diff.Unified() != "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a1\n+a3\n" {
		t.Fatalf("changes %+v\n%s", changes, changes[0].Diff.Unified())
	}
	since, _ := w.ChangesSince("s", 2)
	if since[0].Diff.Unified() != "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a2\n+a3\n" {
		t.Fatalf("since turn 2:\n%s", since[0].Diff.Unified())
	}
	if _, err := w.RevertFile("s", "a.txt", false); err != nil {
		t.Fatal(err)
	}
	if readFile(t, dir, "a.txt") != "a1\n" || readFile(t, dir, "b.txt") != "b2\n" {
		t.Fatal("RevertFile must revert exactly the one file")
	}
	if _, err := w.RevertFile("s", "never.txt", false); err == nil {
		t.Fatal("reverting a file the session never changed must fail")
	}
}

func TestPruneDropsClosedSessionsFirst(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	w := openWS(t, st, dir, Limits{StoreBytes: 1 << 40})
	content := func(seed, n int) string { // incompressible text
		var sb strings.Builder
		x := uint32(seed*7919 + 1)
		for sb.Len() < n {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			fmt.Fprintf(&sb, "%08x\n", x)
		}
		return sb.String()
	}
	old := recorder(t, w, "old")
	for turn := 1; turn <= 3; turn++ {
		_ = old.BeginTurn(turn)
		agentWrite(t, old, "old.txt", content(turn, 20000))
	}
	_ = old.Close()
	cur := recorder(t, w, "cur")
	for turn := 1; turn <= 3; turn++ {
		_ = cur.BeginTurn(turn)
		agentWrite(t, cur, "cur.txt", content(100+turn, 20000))
	}
	before := storedBytes(w)
	openWS(t, st, dir, Limits{StoreBytes: before - 1})
	_ = cur.BeginTurn(4) // any write checks the limit
	agentWrite(t, cur, "cur.txt", "small\n")
	if storedBytes(w) >= before {
		t.Fatalf("store did not shrink: %d >= %d", storedBytes(w), before)
	}
	// Turn 1 needs only "old.txt did not exist"; turn 2 held the first
	// content, which is the oldest to go, and rewinding to turn 1 or 2 now
	// cannot bring back old.txt's content of turn 2.
	if lost, _ := w.Unrestorable("old"); !slices.Equal(lost, []int{2}) {
		t.Fatalf("old session lost %v, want [2]", lost)
	}
	if lost, _ := w.Unrestorable("cur"); len(lost) != 0 {
		t.Fatalf("open session lost %v before the closed one was used up", lost)
	}
	plan, _ := w.Plan("old", 2)
	if plan.Files[0].Action != NotRestorable || !strings.Contains(plan.Files[0].Why, "dropped") {
		t.Fatalf("%+v", plan.Files[0])
	}
	if plan, _ := w.Plan("old", 1); plan.Files[0].Action != Unchanged && plan.Files[0].Action != Remove {
		t.Fatalf("turn 1 of the old session must still be restorable: %+v", plan.Files[0])
	}
	if plan, _ := w.Plan("old", 3); plan.Files[0].Action == NotRestorable {
		t.Fatal("turn 3 of the old session must still be restorable")
	}
}
