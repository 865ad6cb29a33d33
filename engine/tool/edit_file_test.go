package tool

import (
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	const calc = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"
	cases := []struct {
		name     string
		file     string
		args     map[string]any
		wantErr  bool
		want     []string
		wantFile string // expected content afterwards; "" means unchanged
	}{
		{"one match", calc, map[string]any{"old_string": "func Sub(a, b int) int {\n\treturn a + b", "new_string": "func Sub(a, b int) int {\n\treturn a - b"}, false,
			[]string{"edited calc/calc.go: replaced 1 occurrence; now lines 7-8"},
			strings.Replace(calc, "Sub(a, b int) int {\n\treturn a + b", "Sub(a, b int) int {\n\treturn a - b", 1)},
		{"zero matches", calc, map[string]any{"old_string": "func Mul", "new_string": "x"}, true,
			[]string{`edit_file: old_string not found in "calc/calc.go"; read the file and copy the exact text`}, ""},
		{"zero matches with a whitespace-normalised hint", calc, map[string]any{"old_string": "func Sub(a, b int) int {\n    return a + b", "new_string": "x"}, true,
			[]string{`old_string not found in "calc/calc.go", but text differing only in whitespace starts at line 7`}, ""},
		{"many matches without replace_all", calc, map[string]any{"old_string": "return a + b", "new_string": "return 0"}, true,
			[]string{`old_string occurs 2 times in "calc/calc.go" (at lines 4, 8); add surrounding lines to make it unique, or set replace_all to true`}, ""},
		{"replace_all", calc, map[string]any{"old_string": "return a + b", "new_string": "return 0", "replace_all": true}, false,
			[]string{"replaced 2 occurrences; now line 4, line 8"}, strings.ReplaceAll(calc, "return a + b", "return 0")},
		{"replace_all with a single match", calc, map[string]any{"old_string": "package calc", "new_string": "package calc2", "replace_all": true}, false,
			[]string{"replaced 1 occurrence; now line 1"}, strings.Replace(calc, "package calc", "package calc2", 1)},
		{"multi-line replacement grows the range", calc, map[string]any{"old_string": "package calc\n", "new_string": "// Package calc adds.\npackage calc\n"}, false,
			[]string{"now lines 1-2"}, "// Package calc adds.\n" + calc},
		{"deletion", calc, map[string]any{"old_string": "\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n", "new_string": ""}, false,
			[]string{"text removed at line 6"}, strings.TrimSuffix(calc, "\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n")},
		{"CRLF file matched with LF text", "a\r\nb\r\nc\r\n", map[string]any{"old_string": "a\nb", "new_string": "x\ny"}, false,
			[]string{"replaced 1 occurrence"}, "x\r\ny\r\nc\r\n"},
		{"empty old_string", calc, map[string]any{"old_string": "", "new_string": "x"}, true, []string{"old_string is empty", "write_file"}, ""},
		{"identical strings", calc, map[string]any{"old_string": "calc", "new_string": "calc"}, true, []string{"identical"}, ""},
		{"binary file", "a\x00b", map[string]any{"old_string": "a", "new_string": "b"}, true, []string{"binary file"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, env := newWorkspace(t, map[string]string{"calc/calc.go": tc.file})
			tc.args["path"] = "calc/calc.go"
			res := call(t, EditFile(), env, tc.args)
			if res.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
			}
			mustContain(t, res.Content, tc.want...)
			if res.Wrote == tc.wantErr {
				t.Errorf("Wrote = %v", res.Wrote)
			}
			want := tc.wantFile
			if want == "" {
				want = tc.file
			}
			if got := readWS(t, ws, "calc/calc.go"); got != want {
				t.Errorf("file is now\n%q\nwant\n%q", got, want)
			}
			if !tc.wantErr && (len(res.Paths) != 1 || res.Paths[0] != "calc/calc.go") {
				t.Errorf("Paths = %v", res.Paths)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, env := newWorkspace(t, nil)
		res := call(t, EditFile(), env, map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"})
		if !res.IsError || !strings.Contains(res.Content, `"nope.go" does not exist`) {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("many matches lists at most 10 lines", func(t *testing.T) {
		_, env := newWorkspace(t, map[string]string{"x.txt": strings.Repeat("x\n", 25)})
		res := call(t, EditFile(), env, map[string]any{"path": "x.txt", "old_string": "x", "new_string": "y"})
		mustContain(t, res.Content, "occurs 25 times", "(at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 15 more)")
	})
}
