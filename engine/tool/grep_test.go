package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	var many strings.Builder
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&many, "needle %d\n", i)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.go"), []byte("needle outside\n"), 0o644)
	ws, env := newWorkspace(t, map[string]string{
		"b.go":          "package b\n// needle in b\n",
		"a/x.go":        "package a\n\nfunc needle() {}\n",
		"a/x.txt":       "needle in text\n",
		"a.go":          "needle in a.go\r\n",
		"many.txt":      many.String(),
		"bin.dat":       "needle\x00binary",
		".git/config":   "needle in git",
		"huge.txt":      strings.Repeat("needle\n", (2<<20)/7+10),
		"long.txt":      "needle " + strings.Repeat("x", 1000) + "\n",
		"sub/deep/z.go": "NEEDLE upper\n",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(ws, "escape.go")); err != nil {
		t.Skip(err)
	}
	os.Symlink("b.go", filepath.Join(ws, "alias.go"))

	cases := []struct {
		name    string
		args    map[string]any
		wantErr bool
		want    []string
		absent  []string
	}{
		{"sorted by path then line, glob on base name", map[string]any{"pattern": "needle", "glob": "*.go"}, false,
			[]string{"a/x.go:3: func needle() {}\na.go:1: needle in a.go\nalias.go:2: // needle in b\nb.go:2: // needle in b"},
			[]string{"x.txt", "secret", "outside", "\r"}},
		{"case-insensitive flag", map[string]any{"pattern": "(?i)needle upper"}, false, []string{"sub/deep/z.go:1: NEEDLE upper"}, nil},
		{"glob with a slash matches the path", map[string]any{"pattern": "needle", "glob": "a/*.txt"}, false,
			[]string{"a/x.txt:1: needle in text"}, []string{"a/x.go", "many.txt"}},
		{"default cap of 100 results", map[string]any{"pattern": "needle", "path": "many.txt"}, false,
			[]string{"many.txt:100: needle 100\n", "[stopped after 100 matches;"}, []string{"many.txt:101:"}},
		{"max_results", map[string]any{"pattern": "needle", "path": "many.txt", "max_results": 3}, false,
			[]string{"many.txt:3: needle 3\n[stopped after 3 matches"}, []string{"many.txt:4:"}},
		{"max_results capped at 500", map[string]any{"pattern": "needle", "path": "many.txt", "max_results": 9999}, false,
			[]string{"many.txt:500: needle 500\n[stopped after 500 matches"}, []string{"many.txt:501:"}},
		{"exactly max_results does not claim more", map[string]any{"pattern": "needle 60[0-9]", "path": "many.txt", "max_results": 1}, false,
			[]string{"many.txt:600: needle 600"}, []string{"stopped"}},
		{"skips binary, .git and big files", map[string]any{"pattern": "needle", "glob": "*[^y].*"}, false,
			[]string{"[skipped 1 files over 2 MB]"}, []string{"bin.dat", ".git", "huge.txt:"}},
		{"long matching lines are cut", map[string]any{"pattern": "needle", "path": "long.txt"}, false,
			[]string{"long.txt:1: needle xxx", "x [...]"}, nil},
		{"no matches", map[string]any{"pattern": "zebra", "path": "a"}, false, []string{`no matches for "zebra" in a (2 files searched)`}, nil},
		{"bad regexp names the pattern", map[string]any{"pattern": "func (x"}, true,
			[]string{`grep: pattern "func (x" is not a valid Go regular expression (error parsing regexp: missing closing )`, "escaping special characters"}, nil},
		{"bad glob", map[string]any{"pattern": "x", "glob": "[a"}, true, []string{`glob "[a" is not a valid file pattern`}, nil},
		{"missing pattern", map[string]any{}, true, []string{"pattern is missing"}, nil},
		{"negative max_results", map[string]any{"pattern": "x", "max_results": -1}, true, []string{"max_results -1 is negative"}, nil},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, true, []string{`"nope" does not exist`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, Grep(), env, tc.args)
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
	t.Run("paths are the files with matches", func(t *testing.T) {
		res := call(t, Grep(), env, map[string]any{"pattern": "needle", "path": "a"})
		if strings.Join(res.Paths, ",") != "a/x.go,a/x.txt" {
			t.Errorf("Paths = %v", res.Paths)
		}
	})
}
