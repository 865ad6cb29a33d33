package workbench

import (
	"path/filepath"
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
