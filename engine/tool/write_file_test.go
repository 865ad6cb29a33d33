package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	ws, env := newWorkspace(t, map[string]string{"old.txt": "old content", "dir/keep": ""})
	os.Chmod(filepath.Join(ws, "old.txt"), 0o600)
	if err := os.Symlink("real.txt", filepath.Join(ws, "link.txt")); err != nil {
		t.Skip(err)
	}

	cases := []struct {
		name    string
		args    map[string]any
		wantErr bool
		want    string
		check   func(t *testing.T)
	}{
		{"creates parent directories", map[string]any{"path": "new/deep/file.go", "content": "package deep\n"}, false,
			"created new/deep/file.go (13 bytes)", func(t *testing.T) {
				if got := readWS(t, ws, "new/deep/file.go"); got != "package deep\n" {
					t.Errorf("content = %q", got)
				}
			}},
		{"overwrites and keeps the mode", map[string]any{"path": "old.txt", "content": "new"}, false,
			"overwrote old.txt (3 bytes, was 11 bytes)", func(t *testing.T) {
				if got := readWS(t, ws, "old.txt"); got != "new" {
					t.Errorf("content = %q", got)
				}
				if fi, _ := os.Stat(filepath.Join(ws, "old.txt")); fi.Mode().Perm() != 0o600 {
					t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
				}
			}},
		{"empty content", map[string]any{"path": "empty.txt", "content": ""}, false, "created empty.txt (0 bytes)", nil},
		{"writes through a symlink inside the workspace", map[string]any{"path": "link.txt", "content": "via link"}, false,
			"created link.txt", func(t *testing.T) {
				if got := readWS(t, ws, "real.txt"); got != "via link" {
					t.Errorf("target content = %q", got)
				}
				if fi, _ := os.Lstat(filepath.Join(ws, "link.txt")); fi.Mode()&os.ModeSymlink == 0 {
					t.Error("the symlink was replaced by a file")
				}
			}},
		{"directory", map[string]any{"path": "dir", "content": "x"}, true, `"dir" is a directory`, nil},
		{"workspace root", map[string]any{"path": ".", "content": "x"}, true, "is the workspace root", nil},
		{"parent is a file", map[string]any{"path": "old.txt/child", "content": "x"}, true, `writing "old.txt/child" failed`, nil},
		{"missing content", map[string]any{"path": "x.txt"}, true, `content is missing for "x.txt"`, nil},
		{"missing path", map[string]any{"content": "x"}, true, "path is missing", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, WriteFile(), env, tc.args)
			if res.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
			}
			mustContain(t, res.Content, tc.want)
			if res.Wrote == tc.wantErr {
				t.Errorf("Wrote = %v", res.Wrote)
			}
			if !tc.wantErr && (len(res.Paths) != 1 || res.Paths[0] != tc.args["path"]) {
				t.Errorf("Paths = %v", res.Paths)
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
	t.Run("atomic: no temporary files are left behind", func(t *testing.T) {
		for _, dir := range []string{".", "new/deep", "dir"} {
			entries, _ := os.ReadDir(filepath.Join(ws, dir))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("leftover temporary file %s/%s", dir, e.Name())
				}
			}
		}
	})
	t.Run("atomic: an open reader keeps the old content", func(t *testing.T) {
		f, err := os.Open(filepath.Join(ws, "old.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		before, _ := os.Stat(filepath.Join(ws, "old.txt"))
		call(t, WriteFile(), env, map[string]any{"path": "old.txt", "content": "replaced entirely"})
		buf := make([]byte, 64)
		n, _ := f.Read(buf)
		if string(buf[:n]) != "new" {
			t.Errorf("reader of the old file saw %q; the file was modified in place", buf[:n])
		}
		after, _ := os.Stat(filepath.Join(ws, "old.txt"))
		if os.SameFile(before, after) {
			t.Error("the file was not replaced by rename")
		}
	})
}
