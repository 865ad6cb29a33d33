package workbench

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

// TestWireTypesStayInTheAdapter holds the seam between the engine and the
// model library: go-openai is imported only by engine/llm (the adapter
// behind llm.Model), and the transcript and the chat types import nothing
// but the standard library and the project, so a library's wire types
// never become the engine's domain model.
func TestWireTypesStayInTheAdapter(t *testing.T) {
	root := filepath.Join("..", "..")
	const lib = "github.com/sashabaranov/go-openai"
	bad, err := importViolations(root, func(p string) bool { return p == lib || strings.HasPrefix(p, lib+"/") })
	if err != nil {
		t.Fatal(err)
	}
	llmDir := "package llm: " + filepath.Join("engine", "llm") + string(filepath.Separator)
	for _, b := range bad {
		if !strings.HasPrefix(b, llmDir) {
			t.Errorf("%s; only engine/llm may speak go-openai: use engine/chat's types", b)
		}
	}
	for _, pkg := range []string{"engine/transcript", "engine/chat"} {
		bad, err := importViolations(filepath.Join(root, pkg), func(p string) bool {
			first := strings.SplitN(p, "/", 2)[0]
			return strings.Contains(first, ".") && !strings.HasPrefix(p, "github.com/tally-dev/tally/")
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Errorf("%s; %s imports only the standard library and the project", b, pkg)
		}
	}
}

// TestNoAliasOfAnEngineType fails on a type alias in the workbench of a
// type from an engine package: the hosts import the engine's own types
// where they need them (the front door rule keeps the store, settings and
// model client out of their reach), so the workbench re-exports none.
func TestNoAliasOfAnEngineType(t *testing.T) {
	bad, err := engineAliases(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s; import the engine package where the type is needed", b)
	}
	dir := t.TempDir()
	fixture := "package workbench\n\nimport \"github.com/tally-dev/tally/engine/rewind\"\n\ntype (\n\tTurn = rewind.Turn\n\tOwn  struct{}\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad, err := engineAliases(dir); err != nil || len(bad) != 1 || !strings.Contains(bad[0], "Turn") {
		t.Errorf("the check missed an alias: %v, %v", bad, err)
	}
}

// engineAliases lists the type aliases of engine types in the non-test Go
// files of dir.
func engineAliases(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var bad []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		engine := map[string]bool{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/tally-dev/tally/engine/") {
				local := path.Base(p)
				if imp.Name != nil {
					local = imp.Name.Name
				}
				engine[local] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Assign.IsValid() {
				return true
			}
			if sel, ok := ts.Type.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && engine[id.Name] {
					bad = append(bad, filepath.Base(name)+": "+ts.Name.Name+" = "+id.Name+"."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	return bad, nil
}
