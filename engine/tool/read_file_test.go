package tool

import (
	"fmt"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	longLine := strings.Repeat("é", 3000) // 6,000 bytes
	ws, env := newWorkspace(t, map[string]string{
		"big.txt":         numbered(1210),
		"small.go":        "package calc\n\nfunc Add(a, b int) int { return a + b }",
		"empty.txt":       "",
		"blank.txt":       strings.Repeat("\n", 2500),
		"crlf.txt":        "one\r\ntwo\r\n",
		"nul.bin":         "abc\x00def",
		"latin1.txt":      "caf\xe9 au lait\n",
		"long.txt":        "short\n" + longLine + "\nafter\n",
		"wide.txt":        strings.Repeat(strings.Repeat("w", 199)+"\n", 300),
		"dir/inner.txt":   "x",
		"late-binary.txt": strings.Repeat("a", 9000) + "\x00",
	})
	_ = ws
	cases := []struct {
		name    string
		args    map[string]any
		wantErr bool
		want    []string
		absent  []string
	}{
		{"first page of a long file", map[string]any{"path": "big.txt"}, false,
			[]string{"   1\tline 1\n", " 400\tline 400\n", "[lines 1-400 of 1,210; call again with offset 401 for more]"},
			[]string{"line 401\n"}},
		{"second page", map[string]any{"path": "big.txt", "offset": 401}, false,
			[]string{" 401\tline 401\n", "[lines 401-800 of 1,210; call again with offset 801 for more]"},
			[]string{"\tline 400\n"}},
		{"last page", map[string]any{"path": "big.txt", "offset": 1201, "limit": 50}, false,
			[]string{"1210\tline 1210\n", "[lines 1,201-1,210 of 1,210; end of file]"}, nil},
		{"limit", map[string]any{"path": "big.txt", "offset": 10, "limit": 3}, false,
			[]string{"  10\tline 10\n  11\tline 11\n  12\tline 12\n", "call again with offset 13"}, []string{"line 13\n"}},
		{"limit above max is capped", map[string]any{"path": "blank.txt", "limit": 5000}, false,
			[]string{"of 2,500; call again with offset"}, nil},
		{"whole small file without trailing newline", map[string]any{"path": "small.go"}, false,
			[]string{"   1\tpackage calc\n   2\t\n   3\tfunc Add", "[lines 1-3 of 3; end of file]"}, nil},
		{"offset past the end", map[string]any{"path": "small.go", "offset": 10}, true,
			[]string{`offset 10 is past the end of "small.go", which has 3 lines`}, nil},
		{"negative offset", map[string]any{"path": "small.go", "offset": -1}, true, []string{"offset -1 is negative"}, nil},
		{"negative limit", map[string]any{"path": "small.go", "limit": -1}, true, []string{"limit -1 is negative"}, nil},
		{"empty file", map[string]any{"path": "empty.txt"}, false, []string{"empty.txt: empty file, 0 bytes"}, nil},
		{"CRLF shown without carriage returns", map[string]any{"path": "crlf.txt"}, false, []string{"   1\tone\n   2\ttwo\n"}, []string{"\r"}},
		{"NUL byte is binary", map[string]any{"path": "nul.bin"}, false, []string{"nul.bin: binary file, 7 bytes; not shown"}, nil},
		{"invalid UTF-8 is binary", map[string]any{"path": "latin1.txt"}, false, []string{"binary file, 13 bytes; not shown"}, nil},
		{"NUL after the first 8 KB is not sniffed", map[string]any{"path": "late-binary.txt"}, false, []string{"[lines 1-1 of 1; end of file]"}, nil},
		{"long line is cut", map[string]any{"path": "long.txt"}, false,
			[]string{"   2\t" + strings.Repeat("é", 1000) + " [... line cut: 6,000 bytes in total]\n", "   3\tafter"}, nil},
		{"page stops at the size budget", map[string]any{"path": "wide.txt"}, false,
			[]string{"of 300; call again with offset"}, nil},
		{"missing file", map[string]any{"path": "nope.txt"}, true, []string{`"nope.txt" does not exist; use list_dir or grep`}, nil},
		{"directory", map[string]any{"path": "dir"}, true, []string{`"dir" is a directory; use list_dir`}, nil},
		{"missing path", map[string]any{}, true, []string{"path is missing"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, ReadFile(), env, tc.args)
			if res.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
			}
			mustContain(t, res.Content, tc.want...)
			for _, a := range tc.absent {
				if strings.Contains(res.Content, a) {
					t.Errorf("output contains %q", a)
				}
			}
			if len(res.Content) > IntakeLimit {
				t.Errorf("page is %d bytes, over IntakeLimit", len(res.Content))
			}
			if res.Wrote {
				t.Error("Wrote is true")
			}
			if !tc.wantErr && (len(res.Paths) != 1 || res.Paths[0] != tc.args["path"]) {
				t.Errorf("Paths = %v", res.Paths)
			}
		})
	}
	t.Run("absolute path reported relative", func(t *testing.T) {
		res := call(t, ReadFile(), env, map[string]any{"path": ws + "/dir/inner.txt"})
		if res.IsError || len(res.Paths) != 1 || res.Paths[0] != "dir/inner.txt" {
			t.Errorf("got %+v", res)
		}
	})
}
