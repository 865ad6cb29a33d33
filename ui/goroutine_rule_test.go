package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The bridge is the only place in the UI that starts a goroutine or calls
// fyne.Do: work elsewhere goes through Bridge.Work, Watch or Await, so a
// view never touches widgets off the UI goroutine. The test reads the
// UI's source, every package under ui/ included (ui/widget, ui/chat,
// ui/settings…; tests excepted), and fails on any other go statement,
// fyne.Do or fyne.DoAndWait call, or time.AfterFunc (whose function runs
// on a goroutine of its own), whatever name the file imports fyne or time
// under.
func TestOnlyTheBridgeStartsGoroutines(t *testing.T) {
	read := map[string]bool{} // the folders whose source was read
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		read[filepath.Dir(p)] = true
		if filepath.Base(p) == "bridge.go" && filepath.Dir(p) == "." {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, v := range bridgeViolations(p, src) {
			t.Error(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every sub-package is read, the views split out of package ui first.
	for _, dir := range []string{".", "chat", "compaction", "extensions", "rewind", "settings", "widget"} {
		if !read[dir] {
			t.Errorf("the rule did not read the source of ui/%s", dir)
		}
	}
}

// TestBridgeRuleSeesThroughRenamedImports checks the check: a renamed
// fyne or time import, DoAndWait and AfterFunc are all caught.
func TestBridgeRuleSeesThroughRenamedImports(t *testing.T) {
	src := `package x

import (
	f "fyne.io/fyne/v2"
	clock "time"
)

func a() {
	f.Do(func() {})
	f.DoAndWait(func() {})
	clock.AfterFunc(clock.Second, func() {})
	go a()
	clock.Sleep(1)
}
`
	got := bridgeViolations("x.go", []byte(src))
	if len(got) != 4 {
		t.Fatalf("%d violations, want 4: %q", len(got), got)
	}
}

// bridgeViolations lists what in one file starts work off the UI
// goroutine outside the bridge.
func bridgeViolations(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return []string{name + ": " + err.Error()}
	}
	local := map[string]string{} // the name a file uses -> the import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		n := path.Base(p)
		if p == "fyne.io/fyne/v2" {
			n = "fyne"
		}
		if imp.Name != nil {
			n = imp.Name.Name
		}
		local[n] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, fset.Position(n.Pos()).String()+": a go statement outside the bridge; use Bridge.Work, Watch or Await")
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch pkg := local[id.Name]; {
			case pkg == "fyne.io/fyne/v2" && (n.Sel.Name == "Do" || n.Sel.Name == "DoAndWait"):
				out = append(out, fset.Position(n.Pos()).String()+": fyne."+n.Sel.Name+" outside the bridge; use Bridge.Do")
			case pkg == "time" && n.Sel.Name == "AfterFunc":
				out = append(out, fset.Position(n.Pos()).String()+": time.AfterFunc outside the bridge runs its function on another goroutine; use Bridge.After")
			}
		}
		return true
	})
	return out
}
