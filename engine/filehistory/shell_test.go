package filehistory

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// bothWays runs f once with watching (where the system has it) and once
// with every snapshot walking the workspace, as after an event overflow.
func bothWays(t *testing.T, f func(t *testing.T)) {
	t.Run("watch", f)
	t.Run("walk", func(t *testing.T) {
		forceWalk = true
		defer func() { forceWalk = false }()
		f(t)
	})
}

// restoreTurn restores the files of session s to the start of turn.
func restoreTurn(t *testing.T, w *Workspace, turn int) {
	t.Helper()
	plan, err := w.Plan("s", turn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Restore(plan, true); err != nil {
		t.Fatal(err)
	}
}

func walks(w *Workspace) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.walks
}

func viewEntry(w *Workspace, rel string) (entry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.views {
		if e, ok := v.files[rel]; ok {
			return e, true
		}
	}
	return entry{}, false
}

func needGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// gitRepoWith makes a repository in a new directory holding files,
// committed, with the index written a while after the files so that none
// is racily clean.
func gitRepoWith(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for rel, content := range files {
		writeFile(t, dir, rel, content)
		if err := os.Chtimes(filepath.Join(dir, rel), old, old); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func TestShellCommandChangesCleanTrackedFile(t *testing.T) {
	needGit(t)
	bothWays(t, func(t *testing.T) {
		dir := gitRepoWith(t, map[string]string{"src/main.go": "package main\n", "README": "read me\n", "gone.txt": "bye\n"})
		w := openWS(t, openStore(t), dir, Limits{})
		r := recorder(t, w, "s")
		_ = r.BeginTurn(1)
		if err := r.BeforeShell(); err != nil {
			t.Fatal(err)
		}
		if e, ok := viewEntry(w, "src/main.go"); !ok || !e.git {
			t.Fatalf("a clean tracked file was read instead of taken from git's index: %+v", e)
		}
		if storedBytes(w) != 0 {
			t.Fatal("the snapshot stored content before anything changed")
		}
		cmd := exec.Command("sh", "-c", "echo broken > src/main.go && rm gone.txt")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatal(err, string(out))
		}
		ch, err := r.AfterShell()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ch.Modified, []string{"src/main.go"}) || !slices.Equal(ch.Deleted, []string{"gone.txt"}) || len(ch.NotRestorable) != 0 {
			t.Fatalf("changes %+v", ch)
		}
		// Restoring never needs git again: its objects are gone now.
		if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		restoreTurn(t, w, 1)
		if got := readFile(t, dir, "src/main.go"); got != "package main\n" {
			t.Fatalf("restored %q", got)
		}
		if got := readFile(t, dir, "gone.txt"); got != "bye\n" {
			t.Fatalf("restored %q", got)
		}
	})
}

func TestShellGitObjectGone(t *testing.T) {
	needGit(t)
	dir := gitRepoWith(t, map[string]string{"a.txt": "a\n"})
	w := openWS(t, openStore(t), dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	ch := shell(t, r, "echo b > a.txt && rm -rf .git/objects")
	if !slices.Equal(ch.NotRestorable, []string{"a.txt"}) {
		t.Fatalf("changes %+v; a.txt cannot be restored", ch)
	}
	plan, err := w.Plan("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) != 1 || plan.Files[0].Action != NotRestorable || !strings.Contains(plan.Files[0].Why, "object store") {
		t.Fatalf("plan %+v", plan.Files)
	}
}

func TestShellRacilyCleanFileIsRead(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	writeFile(t, dir, "racy.txt", "one\n")
	// Modified "later" than the index will be written: git cannot tell a
	// change made in the same instant from none, so neither may we.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "racy.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	w := openWS(t, openStore(t), dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	if err := r.BeforeShell(); err != nil {
		t.Fatal(err)
	}
	e, ok := viewEntry(w, "racy.txt")
	if !ok || e.git || e.kind != kFile {
		t.Fatalf("a racily clean file was trusted: %+v", e)
	}
	cmd := exec.Command("sh", "-c", "echo two > racy.txt")
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AfterShell(); err != nil {
		t.Fatal(err)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "racy.txt"); got != "one\n" {
		t.Fatalf("restored %q", got)
	}
}

func TestShellChangeBetweenCommandsIsNotTheCommands(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "f.txt", "original\n")
		writeFile(t, dir, "other.txt", "x\n")
		w := openWS(t, openStore(t), dir, Limits{})
		r := recorder(t, w, "s")
		_ = r.BeginTurn(1)
		shell(t, r, "echo y > other.txt")
		writeFile(t, dir, "f.txt", "edited by someone else\n") // outside any command
		_ = r.BeginTurn(2)
		if ch := shell(t, r, "true"); len(ch.Modified)+len(ch.Created)+len(ch.Deleted) != 0 {
			t.Fatalf("a change made outside the command was given to it: %+v", ch)
		}
		_ = r.BeginTurn(3)
		if ch := shell(t, r, "echo by command > f.txt"); !slices.Equal(ch.Modified, []string{"f.txt"}) {
			t.Fatalf("changes %+v", ch)
		}
		restoreTurn(t, w, 3)
		if got := readFile(t, dir, "f.txt"); got != "edited by someone else\n" {
			t.Fatalf("restored %q, want the content from before the command", got)
		}
		if runtime.GOOS == "linux" && !forceWalk && walks(w) != 1 {
			t.Fatalf("%d full walks; after the first, watching should have sufficed", walks(w))
		}
	})
}

func TestShellNewDirectories(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "keep.txt", "k\n")
		writeFile(t, dir, "old/inner/file.txt", "in old\n")
		w := openWS(t, openStore(t), dir, Limits{})
		r := recorder(t, w, "s")
		_ = r.BeginTurn(1)
		ch := shell(t, r, "mkdir -p a/b/c && echo 1 > a/b/c/f && mv a/b/c/f a/b/c/g && echo 2 > a/x && rm a/x && mkdir d && echo 3 > d/one && mv d e && mv old moved")
		if !slices.Equal(ch.Created, []string{"a/b/c/g", "e/one", "moved/inner/file.txt"}) || !slices.Equal(ch.Deleted, []string{"old/inner/file.txt"}) || len(ch.Modified) != 0 {
			t.Fatalf("changes %+v", ch)
		}
		// The directories made and moved by the last command are watched.
		ch = shell(t, r, "echo changed > e/one && echo changed > moved/inner/file.txt && echo new > a/b/c/h && rm -r a/b")
		if !slices.Equal(ch.Modified, []string{"e/one", "moved/inner/file.txt"}) || !slices.Equal(ch.Deleted, []string{"a/b/c/g"}) || len(ch.Created) != 0 {
			t.Fatalf("changes %+v", ch)
		}
		ch = shell(t, r, "mkdir q && echo q > q/f && rm -r q && echo n > old.txt")
		if !slices.Equal(ch.Created, []string{"old.txt"}) || len(ch.Modified)+len(ch.Deleted) != 0 {
			t.Fatalf("changes %+v", ch)
		}
		restoreTurn(t, w, 1)
		if got := readFile(t, dir, "old/inner/file.txt"); got != "in old\n" {
			t.Fatalf("restored %q", got)
		}
		for _, gone := range []string{"e/one", "moved/inner/file.txt", "old.txt", "a/b/c/g"} {
			if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
				t.Fatalf("%s was not removed", gone)
			}
		}
		if runtime.GOOS == "linux" && !forceWalk && walks(w) != 1 {
			t.Fatalf("%d full walks; after the first, watching should have sufficed", walks(w))
		}
	})
}

func TestShellWatchedOverflowWalks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watching is Linux only")
	}
	dir := t.TempDir()
	writeFile(t, dir, "f.txt", "1\n")
	w := openWS(t, openStore(t), dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	shell(t, r, "true")
	// A watcher closed under the view (as when too many are open, or the
	// queue overflowed) makes the next snapshot walk, and nothing is lost.
	w.mu.Lock()
	for _, v := range w.views {
		v.wt.closeFD()
	}
	w.mu.Unlock()
	if ch := shell(t, r, "echo 2 > f.txt"); !slices.Equal(ch.Modified, []string{"f.txt"}) {
		t.Fatalf("changes %+v", ch)
	}
	if walks(w) < 2 {
		t.Fatal("a closed watcher did not make the snapshot walk")
	}
	if ch := shell(t, r, "echo 3 > f.txt"); !slices.Equal(ch.Modified, []string{"f.txt"}) {
		t.Fatalf("changes %+v", ch)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "f.txt"); got != "1\n" {
		t.Fatalf("restored %q", got)
	}
}

func TestShellConcurrentCommands(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "a\n")
	writeFile(t, dir, "b.txt", "b\n")
	w := openWS(t, openStore(t), dir, Limits{})
	r1, r2 := recorder(t, w, "s"), recorder(t, w, "t")
	_ = r1.BeginTurn(1)
	_ = r2.BeginTurn(1)
	if err := r1.BeforeShell(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.txt", "a by 1\n")
	if err := r2.BeforeShell(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b.txt", "b by 2\n")
	ch2, err := r2.AfterShell()
	if err != nil {
		t.Fatal(err)
	}
	ch1, err := r1.AfterShell()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch1.Modified, []string{"a.txt", "b.txt"}) || !slices.Equal(ch2.Modified, []string{"b.txt"}) {
		t.Fatalf("first command %+v, second %+v", ch1, ch2)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "a.txt"); got != "a\n" {
		t.Fatalf("restored %q", got)
	}
}

func TestSimplePatternsMatchLikeGitignore(t *testing.T) {
	lines := []string{"*.log", "!keep.log", "/build/", "node_modules/", "*.tmp", ".cache/", "/top", "x*y", "# comment", "spaced  ", "", "dist"}
	simple, ok := simplePatterns(lines)
	if !ok {
		t.Fatal("the patterns were not taken as simple")
	}
	fast := ignoreRule{simple: simple}
	slow := ignoreRule{gi: compileIgnore(lines)}
	for _, p := range []string{"a.log", "keep.log", "d/keep.log", "d/a.log", "build", "d/build", "node_modules", "d/node_modules", "a.tmp", ".cache", "top", "d/top", "xay", "d/xzzy", "spaced", "dist", "d/dist", "main.go", "d/main.go", "logs"} {
		for _, dir := range []bool{false, true} {
			if f, s := fast.matches(p, dir), slow.matches(p, dir); f != s {
				t.Errorf("%s (dir %v): simple matcher says %v, go-git's %v", p, dir, f, s)
			}
		}
	}
	for _, l := range []string{"a/b", "**/x", "[ab].c", "a?b", `\#x`, "  leading"} {
		if _, ok := simplePatterns([]string{l}); ok {
			t.Errorf("%q was taken as simple", l)
		}
	}
}

func TestShellHardLinkChangedFromOutside(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	writeFile(t, dir, "linked.txt", "before\n")
	if err := os.Link(filepath.Join(dir, "linked.txt"), filepath.Join(elsewhere, "other-name")); err != nil {
		t.Skip("hard links are not available here:", err)
	}
	w := openWS(t, openStore(t), dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	shell(t, r, "true")
	// Written through a name in a directory nobody watches.
	ch := shell(t, r, "sleep 0.01; echo after > "+filepath.Join(elsewhere, "other-name"))
	if !slices.Equal(ch.Modified, []string{"linked.txt"}) {
		t.Fatalf("changes %+v; the change through the other name was missed", ch)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "linked.txt"); got != "before\n" {
		t.Fatalf("restored %q", got)
	}
}

func TestShellUntrustedIndexReadsFiles(t *testing.T) {
	needGit(t)
	for name, setup := range map[string]func(dir string){
		"split index": func(dir string) { git(t, dir, "update-index", "--split-index") },
		"attributes": func(dir string) {
			writeFile(t, dir, ".gitattributes", "*.txt text eol=crlf\n")
		},
		"an included config": func(dir string) {
			// Its settings are not read, so the index cannot vouch.
			git(t, dir, "config", "include.path", "../../shared.gitconfig")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := gitRepoWith(t, map[string]string{"a.txt": "a\n"})
			setup(dir)
			w := openWS(t, openStore(t), dir, Limits{})
			r := recorder(t, w, "s")
			_ = r.BeginTurn(1)
			if err := r.BeforeShell(); err != nil {
				t.Fatal(err)
			}
			if e, ok := viewEntry(w, "a.txt"); !ok || e.git {
				t.Fatalf("the file was taken from an index that cannot be trusted: %+v", e)
			}
			changeAndRestoreA(t, w, r, "echo b > a.txt", "a\n")
		})
	}
}

func TestShellWatcherClosedWithTheLastRecorder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watching is Linux only")
	}
	dir := t.TempDir()
	writeFile(t, dir, "f.txt", "1\n")
	w := openWS(t, openStore(t), dir, Limits{})
	r1, r2 := recorder(t, w, "s"), recorder(t, w, "t")
	_ = r1.BeginTurn(1)
	shell(t, r1, "true")
	watching := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, v := range w.views {
			if v.wt != nil {
				return true
			}
		}
		return false
	}
	if !watching() {
		t.Fatal("the workspace is not watched after a snapshot")
	}
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}
	if !watching() {
		t.Fatal("the watcher was closed while a recorder is still open")
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if watching() {
		t.Fatal("the watcher outlived the last recorder")
	}
	// Reopened, the session records correctly again (walking first).
	r := recorder(t, w, "s")
	_ = r.BeginTurn(2)
	writeFile(t, dir, "f.txt", "changed while nobody watched\n")
	if ch := shell(t, r, "echo 2 > f.txt"); !slices.Equal(ch.Modified, []string{"f.txt"}) {
		t.Fatalf("changes %+v", ch)
	}
	restoreTurn(t, w, 2)
	if got := readFile(t, dir, "f.txt"); got != "changed while nobody watched\n" {
		t.Fatalf("restored %q", got)
	}
}
