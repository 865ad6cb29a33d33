package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfine(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ := newWorkspace(t, map[string]string{"src/main.go": "package main\n"})
	links := map[string]string{
		"out-file":     filepath.Join(outside, "secret.txt"),
		"out-dir":      outside,
		"in-dir":       "src",
		"in-file":      filepath.Join(ws, "src", "main.go"),
		"dangling-out": filepath.Join(outside, "new.txt"),
		"dangling-in":  "src/new.go",
		"src/up":       "..",
		"src/up2":      "../..",
		"loop-a":       "loop-b",
		"loop-b":       "loop-a",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}

	refused := []struct{ name, path string }{
		{"dot-dot", "../x"},
		{"dot-dot after descending", "a/../../x"},
		{"absolute outside", filepath.Join(outside, "secret.txt")},
		{"absolute root", string(filepath.Separator)},
		{"symlinked file pointing outside", "out-file"},
		{"symlinked dir pointing outside", "out-dir"},
		{"file under symlinked dir pointing outside", "out-dir/secret.txt"},
		{"new path under symlinked dir pointing outside", "out-dir/new/deeper.txt"},
		{"dangling symlink pointing outside", "dangling-out"},
		{"symlink to parent of workspace", "src/up2/x"},
	}
	for _, tc := range refused {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			got, err := Confine(ws, tc.path)
			if err == nil {
				t.Fatalf("Confine(%q) = %q, want an error", tc.path, got)
			}
			if !errors.Is(err, ErrOutsideWorkspace) {
				t.Fatalf("error %v does not match ErrOutsideWorkspace", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "outside the workspace") || !strings.Contains(msg, "use a path inside") {
				t.Errorf("error %q does not say what to do", msg)
			}
		})
	}

	allowed := []struct{ name, path, want string }{
		{"root", ".", ws},
		{"plain file", "src/main.go", filepath.Join(ws, "src", "main.go")},
		{"dot-dot staying inside", "src/../src/main.go", filepath.Join(ws, "src", "main.go")},
		{"absolute inside", filepath.Join(ws, "src"), filepath.Join(ws, "src")},
		{"not yet existing", "new/dir/file.go", filepath.Join(ws, "new", "dir", "file.go")},
		{"symlinked dir pointing inside", "in-dir/main.go", filepath.Join(ws, "in-dir", "main.go")},
		{"symlinked file pointing inside", "in-file", filepath.Join(ws, "in-file")},
		{"dangling symlink pointing inside", "dangling-in", filepath.Join(ws, "dangling-in")},
		{"symlink to workspace root", "src/up/src/main.go", filepath.Join(ws, "src", "up", "src", "main.go")},
	}
	for _, tc := range allowed {
		t.Run("allows "+tc.name, func(t *testing.T) {
			got, err := Confine(ws, tc.path)
			if err != nil {
				t.Fatalf("Confine(%q): %v", tc.path, err)
			}
			if got != tc.want {
				t.Errorf("Confine(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}

	t.Run("empty path", func(t *testing.T) {
		if _, err := Confine(ws, ""); err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("err = %v, want an empty-path error", err)
		}
	})
	t.Run("symlink loop", func(t *testing.T) {
		if _, err := Confine(ws, "loop-a/x"); err == nil {
			t.Error("want an error for a symlink loop")
		}
	})
	t.Run("workspace reached through a symlink", func(t *testing.T) {
		alias := filepath.Join(t.TempDir(), "alias")
		if err := os.Symlink(ws, alias); err != nil {
			t.Skip(err)
		}
		got, err := Confine(alias, "src/main.go")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(alias, "src", "main.go"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		// The resolved spelling of a path inside is accepted too.
		if _, err := Confine(alias, filepath.Join(ws, "src")); err != nil {
			t.Errorf("resolved absolute path refused: %v", err)
		}
	})
}

// TestToolsRefuseEscapingPaths checks that every tool taking a path refuses
// one outside the workspace with a clear message and touches nothing.
func TestToolsRefuseEscapingPaths(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, env := newWorkspace(t, nil)
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Skip(err)
	}
	paths := []string{"../secret.txt", secret, "escape/secret.txt"}
	for _, p := range paths {
		cases := []struct {
			tool Tool
			args map[string]any
		}{
			{ReadFile(), map[string]any{"path": p}},
			{ListDir(), map[string]any{"path": p}},
			{Grep(), map[string]any{"pattern": "needle", "path": p}},
			{WriteFile(), map[string]any{"path": p, "content": "pwned"}},
			{EditFile(), map[string]any{"path": p, "old_string": "secret", "new_string": "pwned"}},
		}
		for _, tc := range cases {
			name := tc.tool.Spec().Name
			t.Run(name+" "+p, func(t *testing.T) {
				res := call(t, tc.tool, env, tc.args)
				if !res.IsError {
					t.Fatalf("want an error, got %q", res.Content)
				}
				mustContain(t, res.Content, name+": ", "outside the workspace", "use a path inside")
				if res.Wrote {
					t.Error("Wrote is true for a refused call")
				}
			})
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "secret needle\n" {
		t.Errorf("file outside the workspace changed to %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "..", "secret.txt")); err == nil {
		t.Errorf("a file was created next to the workspace")
	}
}
