package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Every rewrite of the conversation goes through one function: a second
// writer of a rewritten log, a rebuild record or the prompt state would
// let the rewrites disagree (one forgets the superseded messages, another
// the booked prefix change). The test reads the engine's source and fails
// when any function but rebuild writes one of them.
func TestOneFunctionWritesEveryRewrite(t *testing.T) {
	writers := map[string][]string{} // what is written -> the functions that write it
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, filepath.Join("..", "..", "storage")) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := filepath.Base(path) + ":" + fn.Name.Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if what := written(call); what != "" {
					writers[what] = append(writers[what], name)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"a rewritten log":  {"rebuild.go:rebuild"},
		"a rebuild record": {"rebuild.go:rebuild"},
		// A new session stores its first prompt state; every later
		// change is a rewrite.
		"the prompt state": {"rebuild.go:rebuild", "session.go:Create"},
	}
	for what, names := range want {
		got := unique(writers[what])
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Errorf("%s is written by %v; want only %v", what, got, names)
		}
	}
}

// written names what call writes of a rewrite, "" for anything else.
func written(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		if fn.Name == "putPrompt" {
			return "the prompt state"
		}
	case *ast.SelectorExpr:
		switch {
		case fn.Sel.Name == "ReplaceLog":
			return "a rewritten log"
		case fn.Sel.Name == "AddRecord" && len(call.Args) > 0 && isSelector(call.Args[0], "KindRebuild"):
			return "a rebuild record"
		}
	}
	return ""
}

func isSelector(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == name
}

func unique(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
