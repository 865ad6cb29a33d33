package tool

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAbsoluteSymlinksInsideWorkspace checks that symlinks with absolute
// targets inside the workspace, which os.Root refuses to follow, still work
// in every file tool, while absolute ones leading out are still refused.
func TestAbsoluteSymlinksInsideWorkspace(t *testing.T) {
	ws, env := newWorkspace(t, map[string]string{"src/main.go": "package main // needle\n"})
	links := map[string]string{
		"abs-file": filepath.Join(ws, "src", "main.go"),
		"abs-dir":  filepath.Join(ws, "src"),
		"abs-new":  filepath.Join(ws, "src", "new.go"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	cases := []struct {
		tool Tool
		args map[string]any
		want string
	}{
		{ReadFile(), map[string]any{"path": "abs-file"}, "package main // needle"},
		{ReadFile(), map[string]any{"path": "abs-dir/main.go"}, "package main // needle"},
		{Grep(), map[string]any{"pattern": "needle", "path": "abs-file"}, "abs-file:1: package main"},
		{Grep(), map[string]any{"pattern": "needle", "path": "abs-dir"}, "abs-dir/main.go:1: package main"},
		{ListDir(), map[string]any{"path": "abs-dir"}, "abs-dir/main.go ("},
		{EditFile(), map[string]any{"path": "abs-file", "old_string": "needle", "new_string": "pin"}, "edited abs-file"},
		{WriteFile(), map[string]any{"path": "abs-new", "content": "package main\n"}, "created abs-new"},
		{WriteFile(), map[string]any{"path": "abs-dir/other.go", "content": "package main\n"}, "created abs-dir/other.go"},
	}
	for _, tc := range cases {
		t.Run(tc.tool.Spec().Name+" "+tc.args["path"].(string), func(t *testing.T) {
			res := call(t, tc.tool, env, tc.args)
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			mustContain(t, res.Content, tc.want)
		})
	}
	if got := readWS(t, ws, "src/main.go"); got != "package main // pin\n" {
		t.Errorf("src/main.go = %q", got)
	}
	for _, p := range []string{"src/new.go", "src/other.go"} {
		if got := readWS(t, ws, p); got != "package main\n" {
			t.Errorf("%s = %q", p, got)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ws, "abs-new")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("writing through a dangling symlink replaced the link")
	}
}
