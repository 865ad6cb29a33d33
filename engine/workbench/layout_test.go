package workbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayoutDrawingMatchesTheTree holds docs/architecture.md's layout
// drawing to the code: every Go package of the module (go list ./...) is
// drawn, every folder drawn exists, and the rule the drawing states for
// the engine, that it never imports Fyne, holds for go list -deps.
func TestLayoutDrawingMatchesTheTree(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	drawn := drawnFolders(string(doc))
	if len(drawn) < 10 {
		t.Fatalf("the layout drawing of docs/architecture.md has %d folders; is it still the first code block?", len(drawn))
	}
	for _, d := range drawn {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(d))); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md draws %s/, which is not a folder", d)
		}
	}
	list := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Skipf("go list is not available: %v", err)
	}
	const module = "github.com/tally-dev/tally"
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel != "" && !slices.Contains(drawn, rel) {
			t.Errorf("package %s is not in the layout drawing of docs/architecture.md", rel)
		}
	}
	engine := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./engine/...")
	engine.Dir = root
	deps, err := engine.Output()
	if err != nil {
		t.Fatalf("go list -deps ./engine/...: %v", err)
	}
	for _, p := range strings.Fields(string(deps)) {
		if strings.HasPrefix(p, "fyne.io/") {
			t.Errorf("an engine package depends on %s; the engine never imports Fyne", p)
		}
	}
}

// drawnFolders returns the folders of the first code block of doc, a tree
// drawn two spaces per level: each line whose first word ends in "/" is a
// folder inside the nearest less-indented folder above it.
func drawnFolders(doc string) []string {
	_, block, _ := strings.Cut(doc, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var stack, out []string
	for _, line := range strings.Split(block, "\n") {
		word := strings.TrimLeft(line, " ")
		level := (len(line) - len(word)) / 2
		name, _, _ := strings.Cut(word, " ")
		if !strings.HasSuffix(name, "/") || level > len(stack) {
			continue // a file, or a description running on
		}
		stack = append(stack[:level], strings.TrimSuffix(name, "/"))
		out = append(out, strings.Join(stack, "/"))
	}
	return out
}

// TestNoFeatureImportsTheCore holds the seam rule of docs/architecture.md:
// no engine package but the front door (and the core's own test seeds)
// imports engine/agent; a feature that needs the conversation declares an
// interface the core lends it.
func TestNoFeatureImportsTheCore(t *testing.T) {
	list := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./engine/...")
	list.Dir = filepath.Join("..", "..")
	out, err := list.Output()
	if err != nil {
		t.Skipf("go list is not available: %v", err)
	}
	const core = "github.com/tally-dev/tally/engine/agent"
	allowed := []string{core, core + "/longsession", "github.com/tally-dev/tally/engine/workbench"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || slices.Contains(allowed, f[0]) {
			continue
		}
		if slices.Contains(f[1:], core) {
			t.Errorf("%s imports engine/agent; give it an interface of its own that the session lends it", f[0])
		}
	}
}
