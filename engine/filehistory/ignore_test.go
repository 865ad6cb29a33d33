package filehistory

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An agent that wrote a file and then, in a command, a .gitignore of "*"
// made the file look deleted by the command (the manifest after it
// ignored everything) and so "changed outside Tally" for a rewind, which
// then refused without force. The manifests keep the ignore rules the
// session started with.
func TestAgentGitignoreStarKeepsRewindHonest(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "main.go", "package main\n")
	w := openWS(t, st, dir, Limits{})
	r := recorder(t, w, "s")
	if err := r.BeginTurn(1); err != nil {
		t.Fatal(err)
	}
	agentWrite(t, r, "main.go", "package main // agent\n")
	ch := shell(t, r, "echo '*' > .gitignore; echo y > new.txt")
	if len(ch.Deleted) != 0 || !slices.Equal(ch.Created, []string{".gitignore", "new.txt"}) {
		t.Fatalf("the command's changes %+v; want .gitignore and new.txt created, nothing deleted", ch)
	}
	// A later command in a new process (the CLI's next turn) still sees
	// the session's files.
	st = reopenStore(t, st)
	w = openWS(t, st, dir, Limits{})
	r = recorder(t, w, "s")
	if err := r.BeginTurn(2); err != nil {
		t.Fatal(err)
	}
	if ch := shell(t, r, "echo z >> new.txt"); !slices.Equal(ch.Modified, []string{"new.txt"}) {
		t.Fatalf("a change under the agent's .gitignore went unrecorded: %+v", ch)
	}
	plan, err := w.Plan("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Conflicts(); len(c) != 0 {
		t.Fatalf("the session's own writes look changed outside Tally: %v", c)
	}
	if _, err := w.Restore(plan, false); err != nil {
		t.Fatalf("rewind refused: %v", err)
	}
	if got := readFile(t, dir, "main.go"); got != "package main\n" {
		t.Errorf("main.go after the rewind: %q", got)
	}
	for _, rel := range []string{".gitignore", "new.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Errorf("%s survived the rewind", rel)
		}
	}
}
