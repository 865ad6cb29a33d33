package lsp

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// project is a tiny project in one language and the edits the real
// server tests make to it.
type project struct {
	server, program string
	files           map[string]string
	// lib is the file edited: bad has one type error on badLine whose
	// message contains badText; worse moves it down a line and adds a
	// second one whose message contains newText.
	lib, good, bad, worse string
	badLine               int
	badText, newText      string
	use                   string // the file that calls lib's function
	useLine               int    // the line of the call
	fn                    string // the function's name
	fnLine                int    // its line in lib
	hoverText             string // what hovering the call shows
}

var projects = []project{{
	server: "gopls", program: "gopls",
	files: map[string]string{
		"go.mod":  "module example.com/demo\n\ngo 1.22\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/demo/calc\"\n)\n\nfunc main() {\n\tfmt.Println(calc.Add(1, 2))\n}\n",
	},
	lib:     "calc/calc.go",
	good:    "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
	bad:     "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn \"x\"\n}\n",
	worse:   "package calc\n\n// Add returns the sum of a and b.\n// It is moved down a line.\nfunc Add(a, b int) int {\n\treturn \"x\"\n}\n\nfunc Sub(a, b int) int {\n\treturn a - c\n}\n",
	badLine: 5, badText: "cannot use \"x\"", newText: "undefined: c",
	use: "main.go", useLine: 10, fn: "Add", fnLine: 4, hoverText: "func calc.Add(a int, b int) int",
}, {
	server: "pyright", program: "pyright-langserver",
	files: map[string]string{
		"main.py": "from calc import add\n\nprint(add(1, 2))\n",
	},
	lib:     "calc.py",
	good:    "def add(a: int, b: int) -> int:\n    return a + b\n",
	bad:     "def add(a: int, b: int) -> int:\n    return \"x\"\n",
	worse:   "# moved down a line\ndef add(a: int, b: int) -> int:\n    return \"x\"\n\n\ndef sub(a: int, b: int) -> int:\n    return a - c\n",
	badLine: 2, badText: "is not assignable", newText: "\"c\" is not defined",
	use: "main.py", useLine: 3, fn: "add", fnLine: 1, hoverText: "def add(",
}, {
	server: "typescript-language-server", program: "typescript-language-server",
	files: map[string]string{
		"main.ts": "import { add } from \"./calc\";\n\nconsole.log(add(1, 2));\n",
	},
	lib:     "calc.ts",
	good:    "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
	bad:     "export function add(a: number, b: number): number {\n  return \"x\";\n}\n",
	worse:   "// moved down a line\nexport function add(a: number, b: number): number {\n  return \"x\";\n}\n\nexport function sub(a: number, b: number): number {\n  return a - c;\n}\n",
	badLine: 2, badText: "is not assignable to type 'number'", newText: "Cannot find name 'c'",
	use: "main.ts", useLine: 3, fn: "add", fnLine: 1, hoverText: "add(a: number, b: number): number",
}}

// TestRealServers runs each installed server through a tiny project: a
// type error is reported on its line, is gone after the fix, NewIn
// tells a new one from one that moved, and definition, references, hover
// and document symbols point at the right lines.
func TestRealServers(t *testing.T) {
	for _, p := range projects {
		t.Run(p.server, func(t *testing.T) {
			t.Parallel()
			program := findServer(t, p.program)
			dir := t.TempDir()
			writeFiles(t, dir, p.files)
			writeFiles(t, dir, map[string]string{p.lib: p.bad})
			m := acquire(t, dir, Options{
				Servers:      []ServerConfig{serverConfig(t, p.server, program)},
				StartTimeout: 40 * time.Second, RequestTimeout: 30 * time.Second, Settle: 30 * time.Second,
			})
			if av := m.Available(); len(av) != 1 || av[0].Name != p.server {
				t.Errorf("Available = %+v", av)
			}
			ctx := context.Background()

			bad, rep := m.Diagnostics(ctx, p.lib)
			t.Logf("first diagnostics after %s: %v", rep.Waited, Render(bad, 0))
			if len(rep.Late) > 0 {
				t.Fatalf("the server was late: %+v", rep)
			}
			errs := bad.Errors()
			if len(errs) != 1 || errs[0].Line != p.badLine || !strings.Contains(errs[0].Message, p.badText) {
				t.Fatalf("errors %+v, want one on line %d with %q", errs, p.badLine, p.badText)
			}

			writeFiles(t, dir, map[string]string{p.lib: p.worse})
			worse, rep := m.Diagnostics(ctx, p.lib)
			t.Logf("after a second error, %s: %v", rep.Waited, Render(worse, 0))
			// A server still loading the workspace may publish a file's
			// syntax errors first and its type errors a while later; the
			// later publish must come.
			for i := 0; i < 20 && len(NewIn(bad, worse).Errors()) == 0; i++ {
				time.Sleep(250 * time.Millisecond)
				worse, rep = m.Diagnostics(ctx, p.lib)
				t.Logf("  asked again, %s: %v", rep.Waited, Render(worse, 0))
			}
			added := NewIn(bad, worse).Errors()
			if len(added) != 1 || !strings.Contains(added[0].Message, p.newText) {
				t.Errorf("NewIn = %+v, want only the one with %q", added, p.newText)
			}

			writeFiles(t, dir, map[string]string{p.lib: p.good})
			fixed, rep := m.Diagnostics(ctx, p.lib)
			t.Logf("after the fix, %s: %v", rep.Waited, Render(fixed, 0))
			if errs := fixed.Errors(); len(errs) != 0 || len(rep.Late) > 0 {
				t.Fatalf("after the fix: %+v (%+v)", errs, rep)
			}

			col, err := m.columnOf(ctx, p.use, p.useLine, p.fn)
			if err != nil {
				t.Fatal(err)
			}
			defs, err := m.Definition(ctx, p.use, p.useLine, col)
			if err != nil || len(defs) == 0 || defs[0].Path != p.lib || defs[0].Line != p.fnLine || !strings.Contains(defs[0].Excerpt, p.fn) {
				t.Errorf("Definition = %+v, %v; want %s:%d", defs, err, p.lib, p.fnLine)
			}
			refs, err := m.References(ctx, p.lib, p.fnLine, strings.Index(lineOf(p.good, p.fnLine), p.fn)+1)
			var got []string
			for _, r := range refs {
				got = append(got, r.String())
			}
			if err != nil || !slices.ContainsFunc(refs, func(l Location) bool { return l.Path == p.use && l.Line == p.useLine }) {
				t.Errorf("References = %q, %v; want one at %s:%d", got, err, p.use, p.useLine)
			}
			hover, err := m.Hover(ctx, p.use, p.useLine, col)
			if err != nil || !strings.Contains(hover, p.hoverText) {
				t.Errorf("Hover = %q, %v; want it to contain %q", hover, err, p.hoverText)
			}
			syms, err := m.DocumentSymbols(ctx, p.lib)
			if err != nil || !slices.ContainsFunc(syms, func(s Symbol) bool { return s.Name == p.fn && s.Line == p.fnLine && s.Path == p.lib }) {
				t.Errorf("DocumentSymbols = %+v, %v; want %s on line %d", syms, err, p.fn, p.fnLine)
			}
			if res := Tools(m)[1].Run(ctx, nil, []byte(`{"path":"`+p.use+`","line":`+strconv.Itoa(p.useLine)+`,"symbol":"`+p.fn+`"}`)); res.IsError || !strings.Contains(res.Content, p.use+":"+strconv.Itoa(p.useLine)+":") {
				t.Errorf("lsp_references = %+v", res)
			}
			if st := m.Status()[0]; st.State != StateRunning || st.Restarts != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// lineOf returns line n (1-based) of s.
func lineOf(s string, n int) string {
	l, _ := lineAt(s, n-1)
	return l
}
