package lsp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Benchmarks against the real servers (skipped when not installed):
//
//	go test ./engine/lsp -run '^$' -bench . -benchtime 5x

// benchFiles is the size of the generated workspaces.
const benchFiles = 1000

// goWorkspace generates a Go module of benchFiles files: 50 packages of
// 20 files, each package calling the one before it. edit is the file the
// benchmark changes (in a package in the middle, so packages depend on
// it), with its content without and with a type error on errLine.
func goWorkspace() (files map[string]string, edit, good, bad string, errLine int) {
	files = map[string]string{"go.mod": "module example.com/big\n\ngo 1.22\n"}
	const pkgs = 50
	per := benchFiles / pkgs
	for p := 0; p < pkgs; p++ {
		for f := 0; f < per; f++ {
			var b strings.Builder
			fmt.Fprintf(&b, "package p%02d\n\n", p)
			if p > 0 {
				fmt.Fprintf(&b, "import \"example.com/big/p%02d\"\n\n", p-1)
			}
			fmt.Fprintf(&b, "// T%d is a type of file %d.\ntype T%d struct{ N int }\n\n", f, f, f)
			fmt.Fprintf(&b, "// F%d adds to n.\nfunc F%d(n int) int {\n", f, f)
			if p > 0 {
				fmt.Fprintf(&b, "\treturn p%02d.F%d(n) + %d\n}\n", p-1, f, f)
			} else {
				fmt.Fprintf(&b, "\treturn n + %d\n}\n", f)
			}
			fmt.Fprintf(&b, "\n// M%d is a method.\nfunc (t T%d) M%d() int { return F%d(t.N) }\n", f, f, f, f)
			files[fmt.Sprintf("p%02d/f%02d.go", p, f)] = b.String()
		}
	}
	edit = "p25/f00.go"
	good = files[edit]
	bad = strings.Replace(good, "func F0(n int) int {\n", "func F0(n int) int {\n\tvar s string = n\n\t_ = s\n", 1)
	errLine = strings.Count(good[:strings.Index(good, "func F0(")], "\n") + 2
	return files, edit, good, bad, errLine
}

// pyWorkspace generates a Python project of benchFiles modules in 50
// packages, each module importing the same module of the package before.
func pyWorkspace() (files map[string]string, edit, good, bad string, errLine int) {
	files = map[string]string{}
	const pkgs = 50
	per := benchFiles / pkgs
	for p := 0; p < pkgs; p++ {
		files[fmt.Sprintf("p%02d/__init__.py", p)] = ""
		for f := 0; f < per-1; f++ {
			var b strings.Builder
			if p > 0 {
				fmt.Fprintf(&b, "from p%02d.m%02d import f%d as prev\n\n\n", p-1, f, f)
			}
			fmt.Fprintf(&b, "class T%d:\n    def __init__(self, n: int) -> None:\n        self.n = n\n\n\n", f)
			fmt.Fprintf(&b, "def f%d(n: int) -> int:\n", f)
			if p > 0 {
				fmt.Fprintf(&b, "    return prev(n) + %d\n", f)
			} else {
				fmt.Fprintf(&b, "    return n + %d\n", f)
			}
			files[fmt.Sprintf("p%02d/m%02d.py", p, f)] = b.String()
		}
	}
	edit = "p25/m00.py"
	good = files[edit]
	bad = strings.Replace(good, "def f0(n: int) -> int:\n", "def f0(n: int) -> int:\n    s: str = n\n", 1)
	errLine = strings.Count(good[:strings.Index(good, "def f0(")], "\n") + 2
	return files, edit, good, bad, errLine
}

type benchCase struct {
	server, program string
	gen             func() (map[string]string, string, string, string, int)
}

var benchCases = []benchCase{
	{"gopls", "gopls", goWorkspace},
	{"pyright", "pyright-langserver", pyWorkspace},
}

// benchOptions are generous waits: the benchmark measures, the waits
// only bound a broken run.
func benchOptions(b *testing.B, sc ServerConfig) Options {
	return Options{Servers: []ServerConfig{sc}, StartTimeout: time.Minute, RequestTimeout: time.Minute, Settle: time.Minute, LogDir: b.TempDir()}
}

// BenchmarkEditDiagnostics measures an edit's round trip on a generated
// 1,000-file workspace: write the file (a type error in, or out, in
// turn), then Diagnostics until the servers settle.
func BenchmarkEditDiagnostics(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.server, func(b *testing.B) {
			program := findServer(b, bc.program)
			files, edit, good, bad, errLine := bc.gen()
			dir := b.TempDir()
			writeFiles(b, dir, files)
			m := acquire(b, dir, benchOptions(b, serverConfig(b, bc.server, program)))
			ctx := context.Background()
			if _, rep := m.Diagnostics(ctx, edit); len(rep.Late) > 0 {
				b.Fatalf("cold start: %+v", rep)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				content, want := bad, 1
				if i%2 == 1 {
					content, want = good, 0
				}
				writeFiles(b, dir, map[string]string{edit: content})
				set, rep := m.Diagnostics(ctx, edit)
				errs := set.Errors()
				if len(rep.Late) > 0 || len(errs) != want || want == 1 && errs[0].Line != errLine {
					b.Fatalf("edit %d: errors %+v, report %+v", i, errs, rep)
				}
			}
		})
	}
}

// BenchmarkColdStart measures a server's start up to the first settled
// diagnostics of one file: on the tiny test project of each server, and
// on the generated 1,000-file workspaces. Each run is a new process (the
// servers' own caches on disk, such as gopls's, stay warm).
func BenchmarkColdStart(b *testing.B) {
	for _, p := range projects {
		b.Run(p.server+"/tiny", func(b *testing.B) {
			program := findServer(b, p.program)
			dir := b.TempDir()
			writeFiles(b, dir, p.files)
			writeFiles(b, dir, map[string]string{p.lib: p.bad})
			coldStart(b, dir, serverConfig(b, p.server, program), p.lib, p.badLine)
		})
	}
	for _, bc := range benchCases {
		b.Run(bc.server+"/1000", func(b *testing.B) {
			program := findServer(b, bc.program)
			files, edit, _, bad, errLine := bc.gen()
			dir := b.TempDir()
			writeFiles(b, dir, files)
			writeFiles(b, dir, map[string]string{edit: bad})
			coldStart(b, dir, serverConfig(b, bc.server, program), edit, errLine)
		})
	}
}

func coldStart(b *testing.B, dir string, sc ServerConfig, file string, errLine int) {
	b.Helper()
	opts := benchOptions(b, sc)
	opts.Workspace = dir
	for i := 0; i < b.N; i++ {
		m, release := Acquire(opts)
		set, rep := m.Diagnostics(context.Background(), file)
		b.StopTimer()
		errs := set.Errors()
		release()
		if len(rep.Late) > 0 || len(errs) != 1 || errs[0].Line != errLine {
			b.Fatalf("errors %+v, report %+v", errs, rep)
		}
		b.StartTimer()
	}
}
