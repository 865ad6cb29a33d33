package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListDir(t *testing.T) {
	files := map[string]string{
		"go.mod":             "module x\n",
		"b.txt":              strings.Repeat("b", 1234),
		"a/one.go":           "x",
		"a/deep/two.go":      "x",
		"a/deep/er/three.go": "x",
		"a/deep/er/st/4.go":  "x",
		".git/HEAD":          "ref: x",
		"empty/.keep":        "",
	}
	for i := range 520 {
		files[fmt.Sprintf("many/f%03d.txt", i)] = ""
	}
	ws, env := newWorkspace(t, files)
	if err := os.Symlink("a", filepath.Join(ws, "link")); err != nil {
		t.Skip(err)
	}
	os.Remove(filepath.Join(ws, "empty", ".keep"))

	cases := []struct {
		name    string
		args    map[string]any
		wantErr bool
		want    []string
		absent  []string
	}{
		{"root depth 1", map[string]any{}, false,
			[]string{"a/\nb.txt (1,234 bytes)\nempty/\ngo.mod (9 bytes)\nlink -> a\nmany/"},
			[]string{".git", "a/one.go", "many/f000.txt"}},
		{"depth 2", map[string]any{"path": "a", "depth": 2}, false,
			[]string{"a/deep/\na/deep/er/\na/deep/two.go (1 byte)\na/one.go (1 byte)"},
			[]string{"three.go"}},
		{"depth 3 is the deepest", map[string]any{"path": "a", "depth": 3}, false,
			[]string{"a/deep/er/three.go", "a/deep/er/st/"}, []string{"4.go"}},
		{"depth over the max", map[string]any{"depth": 4}, true, []string{"depth 4 is out of range; pass a depth between 1 and 3"}, nil},
		{"bounded with a count of omitted entries", map[string]any{"path": "many"}, false,
			[]string{"many/f499.txt", "[20 more entries not shown; list a subdirectory or use a smaller depth]"},
			[]string{"f500.txt"}},
		{"empty directory", map[string]any{"path": "empty"}, false, []string{"empty/ is empty"}, nil},
		{"symlinked directory inside", map[string]any{"path": "link"}, false, []string{"link/deep/\nlink/one.go"}, nil},
		{"a file", map[string]any{"path": "go.mod"}, true, []string{`"go.mod" is a file, not a directory; use read_file`}, nil},
		{"missing", map[string]any{"path": "nope"}, true, []string{`"nope" does not exist`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, ListDir(), env, tc.args)
			if res.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
			}
			mustContain(t, res.Content, tc.want...)
			for _, a := range tc.absent {
				if strings.Contains(res.Content, a) {
					t.Errorf("output contains %q:\n%s", a, res.Content)
				}
			}
		})
	}
}
