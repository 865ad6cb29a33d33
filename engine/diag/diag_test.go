package diag

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workspace creates a temporary directory holding files (path -> content).
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for p, content := range files {
		abs := filepath.Join(ws, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func needTool(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not on PATH", n)
		}
	}
}

const (
	goMod     = "module example.com/m\n\ngo 1.21\n"
	cleanGo   = "package m\n\nimport \"fmt\"\n\nfunc Hello() { fmt.Println(\"hello\") }\n"
	uglyGo    = "package m\nfunc  Ugly( ) int {return 1}\n"
	vetBadGo  = "package bad\n\nimport \"fmt\"\n\nfunc Bad() { fmt.Printf(\"%d\\n\", \"x\") }\n"
	syntaxBad = "package m\n\nfunc Broken( {\n"
)

func TestGoRules(t *testing.T) {
	needTool(t, "go", "gofmt")
	ws := workspace(t, map[string]string{
		"go.mod":      goMod,
		"clean.go":    cleanGo,
		"ugly.go":     uglyGo,
		"bad/bad.go":  vetBadGo,
		"notes.txt":   "not go\n",
		"broken/b.go": syntaxBad,
	})
	ctx := context.Background()
	cases := []struct {
		name   string
		paths  []string
		want   []string // substrings that must appear in Text
		absent []string
		empty  bool
	}{
		{name: "clean file gives no text", paths: []string{"clean.go"}, empty: true},
		{name: "non-Go path gives no text", paths: []string{"notes.txt"}, empty: true},
		{name: "missing file is ignored", paths: []string{"gone.go"}, empty: true},
		{name: "path outside the workspace is ignored", paths: []string{"../x.go", "/etc/passwd"}, empty: true},
		{name: "badly formatted file gives a gofmt finding", paths: []string{"ugly.go"},
			want: []string{"<diagnostics>\n", "gofmt: ugly.go: file is not gofmt-formatted", "\n</diagnostics>"}},
		{name: "vet problem gives a vet finding", paths: []string{"bad/bad.go"},
			want: []string{"go vet: bad/bad.go:5:", "fmt.Printf format %d has arg \"x\" of wrong type string"}, absent: []string{"gofmt:", ws, "# example.com"}},
		{name: "absolute path is made relative", paths: []string{filepath.Join(ws, "ugly.go")},
			want: []string{"gofmt: ugly.go: file is not gofmt-formatted"}, absent: []string{ws}},
		{name: "syntax error is reported as written", paths: []string{"broken/b.go"},
			want: []string{"gofmt: broken/b.go:3:"}, absent: []string{"expected ')': file is not gofmt-formatted"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := Run(ctx, ws, tc.paths, nil, time.Minute)
			if tc.empty {
				if rep.Text != "" || len(rep.Findings) != 0 {
					t.Errorf("want nothing, got %q", rep.Text)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(rep.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, rep.Text)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(rep.Text, a) {
					t.Errorf("text contains %q:\n%s", a, rep.Text)
				}
			}
		})
	}
	t.Run("several files are reported in a stable order", func(t *testing.T) {
		paths := []string{"bad/bad.go", "ugly.go", "clean.go", "ugly.go"}
		a := Run(ctx, ws, paths, nil, time.Minute)
		b := Run(ctx, ws, []string{"ugly.go", "clean.go", "bad/bad.go"}, nil, time.Minute)
		if a.Text != b.Text {
			t.Errorf("order depends on input:\n%s\n%s", a.Text, b.Text)
		}
		if !strings.HasPrefix(a.Findings[0], "gofmt: ugly.go") {
			t.Errorf("findings %q", a.Findings)
		}
	})
}

func TestGoVetNeedsAModule(t *testing.T) {
	needTool(t, "go", "gofmt")
	ws := workspace(t, map[string]string{"bad.go": vetBadGo, "ugly.go": uglyGo})
	rep := Run(context.Background(), ws, []string{"bad.go", "ugly.go"}, nil, time.Minute)
	if strings.Contains(rep.Text, "go vet") {
		t.Errorf("go vet ran outside a module:\n%s", rep.Text)
	}
	if !strings.Contains(rep.Text, "gofmt: ugly.go") {
		t.Errorf("gofmt finding missing:\n%s", rep.Text)
	}
}

func TestCustomRules(t *testing.T) {
	needTool(t, "sh")
	ws := workspace(t, map[string]string{
		"a.txt": "a", "sub/b.txt": "b", "sub/c.txt": "c", "-dash.txt": "d", "x.md": "m",
	})
	ctx := context.Background()
	sh := func(name, script string) Command {
		return Command{Name: name, Args: []string{"sh", "-c", script, "sh", Files}}
	}
	cases := []struct {
		name  string
		paths []string
		rules []Rule
		want  []string // exact findings
	}{
		{"missing tool is skipped", []string{"a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{{Name: "nope", Args: []string{"tally-no-such-checker-xyz"}}}}}, nil},
		{"empty rules run nothing", []string{"a.txt"}, []Rule{}, nil},
		{"rule for another extension does not run", []string{"x.md"},
			[]Rule{{Ext: ".txt", Commands: []Command{sh("echo", "echo ran")}}}, nil},
		{"file placeholder runs once per file", []string{"sub/c.txt", "a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{{Name: "cat", Args: []string{"sh", "-c", `echo "$1 says $(cat "$1")"`, "sh", File}}}}},
			[]string{"cat: a.txt says a", "cat: sub/c.txt says c"}},
		{"files placeholder passes all files at once", []string{"sub/b.txt", "a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{sh("args", `echo "$@"`)}}},
			[]string{"args: a.txt sub/b.txt"}},
		{"a path starting with a dash is not a flag", []string{"-dash.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{sh("args", `echo "got $@"`)}}},
			[]string{"args: got ./-dash.txt"}},
		{"package directories are deduplicated", []string{"sub/b.txt", "sub/c.txt", "a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{{Name: "dir", Args: []string{"sh", "-c", `echo "run $1 $$"`, "sh", PkgDir}}}}},
			nil}, // checked below by counting
		{"explain applies to standard output only", []string{"a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{{Name: "lint", Args: []string{"sh", "-c", `echo "$1"; echo "lint: broken config" >&2`, "sh", File}, Explain: "needs attention"}}}},
			[]string{"lint: a.txt: needs attention", "lint: lint: broken config"}},
		{"silent failure names the exit status", []string{"a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{sh("fails", "exit 3")}}},
			[]string{"fails exited with status 3 and printed nothing"}},
		{"crash with output reports the output", []string{"a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{sh("crash", "echo boom >&2; exit 2")}}},
			[]string{"crash: boom"}},
		{"needs limits the command", []string{"a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{{Name: "mod", Args: []string{"sh", "-c", "echo ran"}, Needs: []string{"go.mod"}}}}}, nil},
		{"absolute workspace paths in output are made relative", []string{"a.txt"},
			[]Rule{{Ext: ".txt", Commands: []Command{sh("abs", `echo "$PWD/$1:1: problem"`)}}},
			[]string{"abs: a.txt:1: problem"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := Run(ctx, ws, tc.paths, tc.rules, 10*time.Second)
			if tc.name == "package directories are deduplicated" {
				if len(rep.Findings) != 2 || !strings.HasPrefix(rep.Findings[0], "dir: run . ") || !strings.HasPrefix(rep.Findings[1], "dir: run sub ") {
					t.Errorf("findings %q", rep.Findings)
				}
				return
			}
			if strings.Join(rep.Findings, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n got %q\nwant %q", rep.Findings, tc.want)
			}
			if (rep.Text == "") != (len(tc.want) == 0) {
				t.Errorf("text %q", rep.Text)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	needTool(t, "sh", "sleep")
	ws := workspace(t, map[string]string{"a.txt": "a"})
	rules := []Rule{{Ext: ".txt", Commands: []Command{
		// The background sleep holds the output pipe; killing the process
		// group must free it.
		{Name: "slow", Args: []string{"sh", "-c", "sleep 30 & sleep 30"}},
		{Name: "after", Args: []string{"sh", "-c", "echo still runs"}},
	}}}
	start := time.Now()
	rep := Run(context.Background(), ws, []string{"a.txt"}, rules, 300*time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %s", d)
	}
	want := "<diagnostics>\nslow timed out after 300ms\nafter: still runs\n</diagnostics>"
	if rep.Text != want {
		t.Errorf("text\n got %q\nwant %q", rep.Text, want)
	}
}

func TestCancelledContextStopsQuietly(t *testing.T) {
	needTool(t, "sh", "sleep")
	ws := workspace(t, map[string]string{"a.txt": "a"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rules := []Rule{{Ext: ".txt", Commands: []Command{{Name: "slow", Args: []string{"sleep", "30"}}}}}
	start := time.Now()
	rep := Run(ctx, ws, []string{"a.txt"}, rules, time.Minute)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %s", d)
	}
	if rep.Text != "" {
		t.Errorf("text %q", rep.Text)
	}
}

func TestOutputIsBounded(t *testing.T) {
	needTool(t, "sh")
	ws := workspace(t, map[string]string{"a.txt": "a"})
	cases := []struct {
		name, script string
		omitted      string
	}{
		{"many short lines are cut at the line limit", `i=1; while [ $i -le 500 ]; do echo "problem $i"; i=$((i+1)); done`, "(460 more lines omitted)"},
		{"long lines are cut at the byte limit", `i=1; while [ $i -le 100 ]; do printf 'L%s %0200d\n' $i 0; i=$((i+1)); done`, "more lines omitted)"},
		{"one huge line is clipped", `head -c 100000 /dev/zero | tr '\0' 'x'; echo`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := []Rule{{Ext: ".txt", Commands: []Command{{Name: "noisy", Args: []string{"sh", "-c", tc.script}}}}}
			rep := Run(context.Background(), ws, []string{"a.txt"}, rules, 10*time.Second)
			if len(rep.Text) > MaxBytes {
				t.Errorf("text is %d bytes", len(rep.Text))
			}
			lines := strings.Split(rep.Text, "\n")
			if len(lines) > MaxLines+3 {
				t.Errorf("text has %d lines", len(lines))
			}
			for _, l := range lines {
				if len(l) > MaxLineBytes {
					t.Errorf("line of %d bytes", len(l))
				}
			}
			if tc.omitted != "" && !strings.Contains(rep.Text, tc.omitted) {
				t.Errorf("text lacks %q:\n%s", tc.omitted, rep.Text)
			}
			if !strings.HasPrefix(rep.Text, "<diagnostics>\n") || !strings.HasSuffix(rep.Text, "\n</diagnostics>") {
				t.Errorf("text is not one block:\n%s", rep.Text)
			}
		})
	}
}

func TestRender(t *testing.T) {
	cases := []struct {
		name     string
		findings []string
		want     string
	}{
		{"no findings is empty", nil, ""},
		{"one finding", []string{"gofmt: a.go: file is not gofmt-formatted"}, "<diagnostics>\ngofmt: a.go: file is not gofmt-formatted\n</diagnostics>"},
		{"one line over the limit says one line", make41(), "(1 more line omitted)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := render(tc.findings)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

func make41() []string {
	out := make([]string, 41)
	for i := range out {
		out[i] = "x: finding"
	}
	return out
}

func TestDefaultRulesAreFresh(t *testing.T) {
	a := DefaultRules()
	a[0].Commands[0].Args[0] = "changed"
	if DefaultRules()[0].Commands[0].Args[0] != "gofmt" {
		t.Error("DefaultRules shares its slices")
	}
}
