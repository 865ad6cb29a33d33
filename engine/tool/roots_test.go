package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newRoot returns a fresh folder, symlinks resolved, holding files.
func newRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFileToolsReachAdditionalRootsByAbsolutePath(t *testing.T) {
	_, env := newWorkspace(t, map[string]string{"main.go": "package main\n"})
	extra := newRoot(t, map[string]string{"lib/a.txt": "alpha\nbeta\n", ".env": "TOKEN=x\n"})
	rec := &fakeRecorder{}
	env.Roots, env.Recorder = []string{extra}, rec
	abs := func(p string) string { return filepath.ToSlash(filepath.Join(extra, p)) }

	res := call(t, ReadFile(), env, map[string]string{"path": abs("lib/a.txt")})
	if res.IsError || len(res.Paths) != 1 || res.Paths[0] != abs("lib/a.txt") {
		t.Fatalf("read_file in an additional root: %+v", res)
	}
	mustContain(t, res.Content, "alpha")

	res = call(t, EditFile(), env, map[string]string{"path": abs("lib/a.txt"), "old_string": "beta", "new_string": "gamma"})
	if res.IsError || !strings.Contains(readWS(t, extra, "lib/a.txt"), "gamma") {
		t.Fatalf("edit_file in an additional root: %+v", res)
	}
	res = call(t, WriteFile(), env, map[string]string{"path": abs("new/b.txt"), "content": "made"})
	if res.IsError || readWS(t, extra, "new/b.txt") != "made" || res.Paths[0] != abs("new/b.txt") {
		t.Fatalf("write_file in an additional root: %+v", res)
	}
	if got, want := strings.Join(rec.log, ", "), "before "+abs("lib/a.txt")+", after "+abs("lib/a.txt")+", before "+abs("new/b.txt")+", after "+abs("new/b.txt"); got != want {
		t.Errorf("the recorder was told %s\nwant %s", got, want)
	}

	res = call(t, ListDir(), env, map[string]string{"path": extra})
	mustContain(t, res.Content, abs("lib")+"/", abs("new")+"/")
	res = call(t, Grep(), env, map[string]string{"pattern": "gamma", "path": extra})
	mustContain(t, res.Content, abs("lib/a.txt")+":2: gamma")

	// The deny list holds in an additional root too.
	res = call(t, ReadFile(), env, map[string]string{"path": abs(".env")})
	if !res.IsError || !strings.Contains(res.Content, "secret-file deny list") {
		t.Errorf("a secret file of an additional root was read: %+v", res)
	}
	// Relative paths stay in the workspace.
	if res := call(t, ReadFile(), env, map[string]string{"path": "lib/a.txt"}); !res.IsError {
		t.Errorf("a relative path reached the additional root: %+v", res)
	}
}

func TestAdditionalRootsKeepTheirFilesIn(t *testing.T) {
	_, env := newWorkspace(t, nil)
	extra := newRoot(t, map[string]string{"a.txt": "a"})
	outside := newRoot(t, map[string]string{"secret.txt": "s"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(extra, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	env.Roots = []string{extra}

	for _, p := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(extra, "link"), filepath.Join(extra, "..", filepath.Base(outside), "secret.txt")} {
		res := call(t, ReadFile(), env, map[string]string{"path": p})
		if !res.IsError || strings.Contains(res.Content, "s\n") {
			t.Errorf("read_file %s left the roots: %+v", p, res)
		}
	}
	res := call(t, WriteFile(), env, map[string]string{"path": filepath.Join(outside, "x.txt"), "content": "x"})
	mustContain(t, res.Content, "outside the workspace and its additional folders ("+extra+")")
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("write_file wrote outside every root")
	}

	// Without the root the same absolute path is outside.
	env.Roots = nil
	res = call(t, ReadFile(), env, map[string]string{"path": filepath.Join(extra, "a.txt")})
	if !res.IsError || !strings.Contains(res.Content, "is outside the workspace; use a path inside the workspace") {
		t.Errorf("an absolute path outside the workspace was read without the root: %+v", res)
	}
}
