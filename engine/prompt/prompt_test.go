package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
)

func TestAssembleOrdersByTierAndIsDeterministic(t *testing.T) {
	secs := []Section{
		{Name: "summary", Tier: Dynamic, Text: "S"},
		{Name: "env", Tier: Session, Text: "E"},
		{Name: "core", Tier: Static, Text: "C"},
		{Name: "empty", Tier: Static, Text: "  "},
		{Name: "agents", Tier: Workspace, Text: "A"},
		{Name: "cache", Tier: Static, Text: "K"},
	}
	text, spans := Assemble(secs)
	if want := "C\n\nK\n\nA\n\nE\n\nS"; text != want {
		t.Errorf("Assemble = %q; want %q", text, want)
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
		if !strings.HasPrefix(text[s.Offset:], map[string]string{"core": "C", "cache": "K", "agents": "A", "env": "E", "summary": "S"}[s.Name]) {
			t.Errorf("span %s offset %d wrong", s.Name, s.Offset)
		}
	}
	if g := strings.Join(names, ","); g != "core,cache,agents,env,summary" {
		t.Errorf("span order %s", g)
	}
	again, _ := Assemble(secs)
	if again != text {
		t.Error("assembly is not deterministic")
	}
}

func tool(name string) chat.Tool {
	return chat.Tool{Name: name, Description: "d " + name}
}

func TestDiffNamesTheChangedSection(t *testing.T) {
	base := []Section{{Name: "core", Tier: Static, Text: "core rules"}, {Name: "agents", Tier: Workspace, Text: "use tabs"}, {Name: "env", Tier: Session, Text: "linux"}}
	tools := []chat.Tool{tool("a"), tool("b")}
	t1, s1 := Assemble(base)
	f1 := Fingerprints(t1, s1, tools)
	changed := append([]Section(nil), base...)
	changed[1].Text = "use spaces"
	t2, s2 := Assemble(changed)
	f2 := Fingerprints(t2, s2, tools)
	d := Diff(f1, f2, t1, t2)
	if !d.Changed || d.Part != "system" || d.Name != "agents" || d.Offset != strings.Index(t1, "tabs") {
		t.Errorf("drift = %+v; want section agents at %d", d, strings.Index(t1, "tabs"))
	}
	if Diff(f1, f1, t1, t1).Changed {
		t.Error("identical prefixes reported as drift")
	}
	f3 := Fingerprints(t1, s1, []chat.Tool{tool("a"), tool("c")})
	if d := Diff(f1, f3, t1, t1); d.Part != "tools" || d.Name != "c" {
		t.Errorf("tool drift = %+v; want tool c", d)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadContextMergesInOrderWithIncludes(t *testing.T) {
	root := t.TempDir()
	user := filepath.Join(root, "config")
	ws := filepath.Join(root, "projects", "app")
	write(t, filepath.Join(user, "AGENTS.md"), "user rule")
	write(t, filepath.Join(root, "projects", "AGENTS.md"), "parent rule")
	write(t, filepath.Join(ws, "AGENTS.md"), "root rule\n@docs/style.md\n@missing.md")
	write(t, filepath.Join(ws, "docs", "style.md"), "style rule\n@deeper.md")
	write(t, filepath.Join(ws, "docs", "deeper.md"), "deep rule\n@style.md")
	write(t, filepath.Join(ws, "main.go"), "package main")
	os.Mkdir(filepath.Join(ws, ".git"), 0o755)
	pack := LoadContext(ws, user)
	in := pack.Instructions
	iu, ir := strings.Index(in, "user rule"), strings.Index(in, "root rule")
	if iu < 0 || ir < iu {
		t.Errorf("merge order wrong:\n%s", in)
	}
	if strings.Contains(in, "parent rule") {
		t.Errorf("an AGENTS.md outside the workspace was read:\n%s", in)
	}
	for _, want := range []string{"style rule", "deep rule", "@style.md (not included: include cycle)", "@missing.md (not found)"} {
		if !strings.Contains(in, want) {
			t.Errorf("instructions lack %q:\n%s", want, in)
		}
	}
	if pack.Listing != "AGENTS.md\ndocs/\nmain.go" {
		t.Errorf("listing = %q", pack.Listing)
	}
	if again := LoadContext(ws, user); again.Instructions != in {
		t.Error("context pack is not deterministic")
	}
}

func TestIncludeDepthIsBounded(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "AGENTS.md"), "@f1.md")
	for i := 1; i <= 8; i++ {
		next := ""
		if i < 8 {
			next = "\n@f" + string(rune('0'+i+1)) + ".md"
		}
		write(t, filepath.Join(ws, "f"+string(rune('0'+i))+".md"), "level"+string(rune('0'+i))+next)
	}
	in := LoadContext(ws, "").Instructions
	if !strings.Contains(in, "level5") || strings.Contains(in, "level6") || !strings.Contains(in, "more than 5 levels") {
		t.Errorf("include depth not bounded at 5:\n%s", in)
	}
}

func TestOversizedContextFileIsCut(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "AGENTS.md"), strings.Repeat("x", MaxContextFileBytes*2))
	in := LoadContext(ws, "").Instructions
	if len(in) > MaxContextFileBytes+200 || !strings.Contains(in, "cut at 16 KB") {
		t.Errorf("oversized file not cut: %d bytes", len(in))
	}
}

func TestExtendJoinsLikeAssemble(t *testing.T) {
	base, spans := Assemble([]Section{{Name: "a", Tier: Static, Text: "alpha"}, {Name: "b", Tier: Session, Text: "beta"}})
	text, out := Extend(base, spans, Section{Name: "summary", Tier: Dynamic, Text: "gamma"})
	want, _ := Assemble([]Section{{Name: "a", Tier: Static, Text: "alpha"}, {Name: "b", Tier: Session, Text: "beta"}, {Name: "summary", Tier: Dynamic, Text: "gamma"}})
	if text != want {
		t.Fatalf("Extend = %q, want %q", text, want)
	}
	last := out[len(out)-1]
	if len(out) != 3 || text[last.Offset:] != "gamma" || last.SHA != Digest("gamma") || len(spans) != 2 {
		t.Fatalf("spans = %+v (base spans %d)", out, len(spans))
	}
	if same, s := Extend(base, spans, Section{Name: "summary", Text: " \n"}); same != base || len(s) != 2 {
		t.Fatal("an empty section must leave the prompt as it is")
	}
}
