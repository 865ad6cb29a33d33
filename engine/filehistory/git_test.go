package filehistory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestShellReadsPackedObjects(t *testing.T) {
	needGit(t)
	var big strings.Builder
	for i := range 400 {
		big.WriteString("line ")
		big.WriteString(strings.Repeat("x", i%37))
		big.WriteString("\n")
	}
	dir := gitRepoWith(t, map[string]string{"big.txt": big.String()})
	for i := range 3 { // later versions, so that the pack holds deltas
		writeFile(t, dir, "big.txt", big.String()+strings.Repeat("more\n", i+1))
		git(t, dir, "commit", "-q", "-am", "more")
	}
	git(t, dir, "gc", "-q", "--aggressive")
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(filepath.Join(dir, "big.txt"), old, old)
	git(t, dir, "update-index", "--refresh")
	want := readFile(t, dir, "big.txt")

	g := findRepo(dir)
	if g == nil {
		t.Fatal("the repository was not found")
	}
	objs := g.openObjects(DefaultFileBytes)
	defer objs.close()
	for _, line := range strings.Split(strings.TrimSpace(git(t, dir, "rev-list", "--objects", "--all")), "\n") {
		id := strings.Fields(line)[0]
		if typ := strings.TrimSpace(git(t, dir, "cat-file", "-t", id)); typ != "blob" {
			continue
		}
		var b [20]byte
		copy(b[:], mustHex(t, id))
		data, err := objs.blob(b)
		if err != nil {
			t.Fatalf("blob %s: %v", id, err)
		}
		if string(data) != git(t, dir, "cat-file", "blob", id) {
			t.Fatalf("blob %s read wrong", id)
		}
	}

	w := openWS(t, openStore(t), dir, Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	if ch := shell(t, r, "echo > big.txt"); !slices.Equal(ch.Modified, []string{"big.txt"}) || len(ch.NotRestorable) != 0 {
		t.Fatalf("changes %+v", ch)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, dir, "big.txt"); got != want {
		t.Fatal("the packed content was not restored")
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b := make([]byte, len(s)/2)
	for i := range b {
		var v byte
		for _, c := range s[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				v |= byte(c - 'a' + 10)
			default:
				t.Fatalf("bad hex %q", s)
			}
		}
		b[i] = v
	}
	return b
}

func TestGitIndexVersions(t *testing.T) {
	needGit(t)
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			files := map[string]string{"a/b/c.txt": "c\n", "a/b/d.txt": "d\n", "a/e.txt": "e\n", "z.txt": "z\n"}
			dir := gitRepoWith(t, files)
			writeFile(t, dir, "later.txt", "intent to add\n")
			git(t, dir, "add", "-N", "later.txt") // an extended flag: index v3 at least
			git(t, dir, "update-index", "--index-version", version)
			// Flags whose entries' stat says nothing of the file, before
			// and after entries that must still be read right.
			git(t, dir, "update-index", "--assume-unchanged", "a/b/d.txt", "z.txt")
			git(t, dir, "update-index", "--skip-worktree", "a/e.txt")
			x, err := findRepo(dir).readIndex()
			if err != nil {
				t.Fatal(err)
			}
			for rel := range files {
				_, ok := x.entries[rel]
				if want := rel == "a/b/c.txt"; ok != want {
					t.Errorf("%s taken from the index: %v, want %v", rel, ok, want)
				}
			}
			if _, ok := x.entries["later.txt"]; ok {
				t.Error("an intent-to-add entry was taken as the file's content")
			}
			git(t, dir, "update-index", "--no-assume-unchanged", "a/b/d.txt", "z.txt")
			git(t, dir, "update-index", "--no-skip-worktree", "a/e.txt")
			// As written with index.skipHash: no checksum.
			name := filepath.Join(dir, ".git", "index")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			clear(data[len(data)-20:])
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if x, err = findRepo(dir).readIndex(); err != nil {
				t.Fatal(err)
			}
			for rel := range files {
				if _, ok := x.entries[rel]; !ok {
					t.Errorf("%s is missing from the index read", rel)
				}
			}
			// A damaged index is not used.
			data[len(data)-1] = 1
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := findRepo(dir).readIndex(); err == nil {
				t.Error("an index with a wrong checksum was used")
			}
		})
	}
}

func TestGitIndexOfSubdirectoryWorkspace(t *testing.T) {
	needGit(t)
	dir := gitRepoWith(t, map[string]string{"sub/x.txt": "x\n", "top.txt": "t\n"})
	w := openWS(t, openStore(t), filepath.Join(dir, "sub"), Limits{})
	r := recorder(t, w, "s")
	_ = r.BeginTurn(1)
	if err := r.BeforeShell(); err != nil {
		t.Fatal(err)
	}
	if e, ok := viewEntry(w, "x.txt"); !ok || !e.git {
		t.Fatalf("the index of the enclosing repository was not used: %+v", e)
	}
}

func TestShellReadsAlternateObjects(t *testing.T) {
	needGit(t)
	for _, relative := range []bool{false, true} {
		t.Run(map[bool]string{false: "absolute", true: "relative"}[relative], func(t *testing.T) {
			src := gitRepoWith(t, map[string]string{"a.txt": "from the source\n"})
			dir := filepath.Join(t.TempDir(), "clone")
			git(t, src, "clone", "-q", "--shared", src, dir) // objects only in src
			if relative {
				rel, err := filepath.Rel(filepath.Join(dir, ".git", "objects"), filepath.Join(src, ".git", "objects"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".git", "objects", "info", "alternates"), []byte(rel+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := time.Now().Add(-time.Hour)
			_ = os.Chtimes(filepath.Join(dir, "a.txt"), old, old)
			git(t, dir, "update-index", "--refresh")
			w := openWS(t, openStore(t), dir, Limits{})
			r := recorder(t, w, "s")
			_ = r.BeginTurn(1)
			if err := r.BeforeShell(); err != nil {
				t.Fatal(err)
			}
			if e, ok := viewEntry(w, "a.txt"); !ok || !e.git {
				t.Fatalf("the file was not taken from the index: %+v", e)
			}
			changeAndRestoreA(t, w, r, "echo changed > a.txt", "from the source\n")
		})
	}
}
