package workbench

import (
	"errors"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// forbiddenBehindFrontDoor are the packages the hosts reach only through
// the workbench: the store, the settings, and the model client with its
// scripted test server below it.
var forbiddenBehindFrontDoor = []string{
	"github.com/tally-dev/tally/storage",
	"github.com/tally-dev/tally/config",
	"github.com/tally-dev/tally/engine/llm",
}

// pendingFrontDoor names the hosts not yet moved onto the workbench: their
// forbidden imports are logged, not failed. Whoever finishes moving a host
// removes it here, and the test then holds it to the rule.
var pendingFrontDoor = map[string]bool{}

// TestOnlyTheFrontDoorOpensTheEngine reads the imports of every non-test
// Go file of the hosts (ui, cli and acp, with their subpackages,
// for every platform) and fails naming each file that imports a package
// behind the front door.
func TestOnlyTheFrontDoorOpensTheEngine(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, host := range []string{"cli", "ui", "acp"} {
		t.Run(host, func(t *testing.T) {
			bad, err := frontDoorViolations(filepath.Join(root, host))
			if err != nil {
				t.Fatal(err)
			}
			if pendingFrontDoor[host] {
				for _, b := range bad {
					t.Logf("pending move onto the workbench: %s", b)
				}
				if len(bad) == 0 {
					t.Logf("%s no longer imports what is behind the front door: remove it from pendingFrontDoor", host)
				}
				return
			}
			for _, b := range bad {
				t.Errorf("%s; go through engine/workbench instead", b)
			}
		})
	}
}

// TestFrontDoorCheckCatchesAForbiddenImport checks the check itself: a
// package importing the store, whether in a file built here or only on
// another platform, is reported with its package and file, and its tests
// may import anything.
func TestFrontDoorCheckCatchesAForbiddenImport(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":         "package host\n\nimport _ \"github.com/tally-dev/tally/storage\"\n",
		"sub/b.go":     "//go:build plan9\n\npackage sub\n\nimport (\n\t\"fmt\"\n\tcfg \"github.com/tally-dev/tally/config\"\n)\n\nvar _ = fmt.Sprint\nvar _ cfg.Settings\n",
		"c.go":         "package host\n\nimport _ \"github.com/tally-dev/tally/engine/agent\"\n",
		"a_test.go":    "package host\n\nimport _ \"github.com/tally-dev/tally/engine/llm/llmtest\"\n",
		"sub/c_doc.go": "// Package sub is a fixture.\npackage sub\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad, err := frontDoorViolations(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"package host: a.go imports github.com/tally-dev/tally/storage",
		"package sub: " + filepath.Join("sub", "b.go") + " imports github.com/tally-dev/tally/config",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}

// frontDoorViolations lists, sorted, each non-test Go file under dir that
// imports a package behind the front door, as "package P: FILE imports
// PATH" with FILE relative to dir. Files of every platform count: those
// go/build ignores here are read too.
func frontDoorViolations(dir string) ([]string, error) {
	return importViolations(dir, func(p string) bool {
		for _, forbidden := range forbiddenBehindFrontDoor {
			if p == forbidden || strings.HasPrefix(p, forbidden+"/") {
				return true
			}
		}
		return false
	})
}

// importViolations lists, sorted, each non-test Go file under dir that
// imports a package for which forbidden is true, as "package P: FILE
// imports PATH" with FILE relative to dir. Files of every platform count.
func importViolations(dir string, forbidden func(path string) bool) ([]string, error) {
	var bad []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != dir && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil // no Go files: nothing to check here
		}
		if err != nil {
			return err
		}
		var names []string
		names = append(names, pkg.GoFiles...)
		names = append(names, pkg.CgoFiles...)
		names = append(names, pkg.IgnoredGoFiles...)
		fset := token.NewFileSet()
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(path, name), nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, filepath.Join(path, name))
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					continue
				}
				if forbidden(p) {
					bad = append(bad, "package "+f.Name.Name+": "+rel+" imports "+p)
				}
			}
		}
		return nil
	})
	sort.Strings(bad)
	return bad, err
}
