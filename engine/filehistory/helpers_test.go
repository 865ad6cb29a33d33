package filehistory

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tally-dev/tally/storage"
)

// openStore opens a store in a fresh temporary directory, closed at cleanup.
func openStore(tb testing.TB) *storage.Store {
	tb.Helper()
	st, err := storage.Open(filepath.Join(tb.TempDir(), "tally.db"), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// reopenStore closes st and opens its file again, as a new process would.
func reopenStore(tb testing.TB, st *storage.Store) *storage.Store {
	tb.Helper()
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
	st2, err := storage.Open(st.Path(), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st2.Close() })
	return st2
}

func openWS(tb testing.TB, st *storage.Store, dir string, l Limits) *Workspace {
	tb.Helper()
	w, err := Open(st, dir, l)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func recorder(tb testing.TB, w *Workspace, session string) *Recorder {
	tb.Helper()
	r, err := w.Recorder(session)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func writeFile(tb testing.TB, dir, rel, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func readFile(tb testing.TB, dir, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// agentWrite writes a file the way write_file would, with the recorder
// calls around it.
func agentWrite(tb testing.TB, r *Recorder, rel, content string) {
	tb.Helper()
	if err := r.BeforeWrite(rel); err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, r.Workspace().Dir(), rel, content)
	if err := r.AfterWrite(rel); err != nil {
		tb.Fatal(err)
	}
}

// shell runs command with sh in dir between BeforeShell and AfterShell.
func shell(tb testing.TB, r *Recorder, command string) ShellChanges {
	tb.Helper()
	if err := r.BeforeShell(); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = r.Workspace().Dir()
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", command, err, out)
	}
	ch, err := r.AfterShell()
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// changeAndRestoreA runs command, after the caller's BeforeShell, in the
// workspace, checks that AfterShell finds a.txt modified and restorable,
// and that restoring turn 1 gives it back as want.
func changeAndRestoreA(t *testing.T, w *Workspace, r *Recorder, command, want string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = w.Dir()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if ch, err := r.AfterShell(); err != nil || !slices.Equal(ch.Modified, []string{"a.txt"}) || len(ch.NotRestorable) != 0 {
		t.Fatalf("changes %+v, %v", ch, err)
	}
	restoreTurn(t, w, 1)
	if got := readFile(t, w.Dir(), "a.txt"); got != want {
		t.Fatalf("restored %q; want %q", got, want)
	}
}

// fileState is what treeState records of one path.
type fileState struct {
	sum   string
	mode  fs.FileMode
	mtime int64
}

// treeState hashes every file and link under dir, .git included.
func treeState(tb testing.TB, dir string) map[string]fileState {
	tb.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var data []byte
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			data = []byte("link:" + t)
		case fi.Mode().IsRegular():
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = fileState{hex.EncodeToString(sum[:]), fi.Mode(), fi.ModTime().UnixNano()}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// listed reports whether some manifest of w lists rel.
func listed(w *Workspace, rel string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.views {
		if _, ok := v.files[rel]; ok {
			return true
		}
	}
	return false
}
