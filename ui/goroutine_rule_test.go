package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The bridge is the only place in the UI that starts a goroutine or calls
// fyne.Do: work elsewhere goes through Bridge.Work, Watch or Await, so a
// view never touches widgets off the UI goroutine. The test reads the
// UI's source (tests excepted) and fails on any other go statement or
// fyne.Do call.
func TestOnlyTheBridgeStartsGoroutines(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if filepath.Base(path) == "bridge.go" && filepath.Dir(path) == "." {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement outside the bridge; use Bridge.Work, Watch or Await", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "fyne" && n.Sel.Name == "Do" {
					t.Errorf("%s: fyne.Do outside the bridge; use Bridge.Do", fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
