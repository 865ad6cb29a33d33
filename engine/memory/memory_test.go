package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

var someTurns = []Turn{{N: 1, Text: "Fix the build"}, {N: 2, Text: "Now the tests"}}

// TestParseNeverFailsOnModelOutput: whatever the model answers, Parse
// returns entries and notes, never a panic, and keeps only valid entries.
func TestParseNeverFailsOnModelOutput(t *testing.T) {
	for _, content := range []string{
		"", "no json here", "{", "[", "{}", `{"entries": null}`, `{"entries": "x"}`, `[1, 2, null]`,
		`{"entries": [{"kind": 3, "text": {"a": 1}}]}`, `{"entries": [{"kind": "build"}]}`,
		strings.Repeat("[", 10000), `{"entries": [{"kind": "build", "text": "` + strings.Repeat("x", 5000) + `"}]}`,
		"\x00\xff{\"entries\":[{\"kind\":\"pitfall\",\"text\":\"ok\",\"source\":[1]}]}",
	} {
		p := Parse(content, someTurns, "s", "/ws")
		for _, e := range p.Entries {
			if e.Text == "" || e.Kind == "" {
				t.Errorf("%.40q: kept an invalid entry %+v", content, e)
			}
		}
		if len(p.Entries) == 0 && len(p.Notes) == 0 && content != `{"entries": null}` {
			t.Errorf("%.40q: dropped everything without a note", content)
		}
	}
}

// TestParseReadsEntriesInProse: the JSON is found inside a code fence
// after prose; sources in each shape name their turn; an unknown turn is
// kept as 0 with a note; a secret is redacted and an engine tag defused.
func TestParseReadsEntriesInProse(t *testing.T) {
	fake := secretstest.New(1)
	content := "Sure.\n```json\n" + `{"entries": [
		{"kind": "Build", "text": "Run  make test\nbefore pushing.", "source": 2},
		{"kind": "pitfall", "text": "The key ` + fake.GitHubPAT + ` expired; <agent_status> lies.", "source": "turn 1"},
		{"kind": "convention", "text": "Tabs.", "source": {"turn": 7}}]}` + "\n```"
	p := Parse(content, someTurns, "s1", "/ws")
	if len(p.Entries) != 3 {
		t.Fatalf("entries %+v notes %q", p.Entries, p.Notes)
	}
	if e := p.Entries[0]; e.Kind != Build || e.Text != "Run make test before pushing." || e.Source != (Source{"s1", 2}) || e.Workspace != "/ws" {
		t.Errorf("first %+v", e)
	}
	if e := p.Entries[1]; strings.Contains(e.Text, "ghp_") || strings.Contains(e.Text, "<agent_status") || e.Source.Turn != 1 {
		t.Errorf("second %+v", e)
	}
	if e := p.Entries[2]; e.Source.Turn != 0 || len(p.Notes) != 1 {
		t.Errorf("third %+v, notes %q", e, p.Notes)
	}
}

// TestRequestKeepsTheSessionsPrefix: the proposal request is the
// session's next request with one user message joined at the end.
func TestRequestKeepsTheSessionsPrefix(t *testing.T) {
	base := llm.Request{Model: "m", Tools: []chat.Tool{{Name: "read_file"}}, Messages: []chat.Message{
		{Role: chat.RoleSystem, Content: "sys"}, {Role: chat.RoleUser, Content: "hi"}, {Role: chat.RoleAssistant, Content: "hello"}, {Role: chat.RoleUser, Content: "<agent_status/>"}}}
	req := Request(base, someTurns)
	if len(req.Messages) != 4 || req.Messages[2].Content != "hello" || len(req.Tools) != 1 || base.Messages[3].Content != "<agent_status/>" {
		t.Fatalf("request %+v (base changed: %v)", req.Messages, base.Messages[3].Content != "<agent_status/>")
	}
	last := req.Messages[3].Content
	if !strings.HasPrefix(last, "<agent_status/>") || !strings.Contains(last, "1: Fix the build\n2: Now the tests") {
		t.Errorf("last message %q", last)
	}
}

// TestProposeNotesAToolCall: an answer that calls a tool proposes what its
// text holds and says the call was ignored.
func TestProposeNotesAToolCall(t *testing.T) {
	m := llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		return &llm.Response{Content: "[]", ToolCalls: []llm.ToolCall{{Name: "read_file"}}}, nil
	})
	p, err := Propose(context.Background(), m, llm.Request{}, nil, "s", "/ws")
	if err != nil || len(p.Entries) != 0 || len(p.Notes) != 1 {
		t.Errorf("%+v, %v", p, err)
	}
}

// TestFilesRoundTrip: accepted entries are appended to their file once,
// read back with their source, and make the prompt's section; a secret in
// an edited text is redacted; a symlink in the file's place is refused.
func TestFilesRoundTrip(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	if Section(ws, user) != "" {
		t.Error("a section without entries")
	}
	e := Entry{Kind: Build, Text: "Run go test ./...", Source: Source{"s1", 3}, Workspace: ws}
	pref := Entry{Kind: Preference, Text: "Token " + secretstest.New(2).OpenAIProj + " is mine.", Source: Source{Session: "s2"}, Workspace: ws}
	for _, x := range []Entry{e, e, pref} {
		path, err := FileFor(x, user)
		if err == nil {
			err = Append(path, x)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	got := Accepted(ws, user)
	if len(got) != 2 || got[0].Text != e.Text || got[0].Source != e.Source || got[0].Kind != Build || got[1].Kind != Preference || strings.Contains(got[1].Text, "sk-proj-") {
		t.Fatalf("accepted %+v", got)
	}
	sec := Section(ws, user)
	if !strings.HasPrefix(sec, "# Memory\n") || !strings.Contains(sec, "- [build] Run go test ./...\n- [preference] ") || strings.Contains(sec, "session s1") {
		t.Errorf("section:\n%s", sec)
	}
	if Cost(got[0]) <= 0 || HeadCost() <= 0 {
		t.Error("no cost")
	}
	// A line written by hand counts as an entry.
	f, _ := os.OpenFile(ProjectFile(ws), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("Use tabs.")
	f.Close()
	if err := Append(ProjectFile(ws), Entry{Kind: Pitfall, Text: "Mind the cache.", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	if got := Accepted(ws, ""); len(got) != 3 || got[1].Text != "Use tabs." || got[2].Kind != Pitfall {
		t.Errorf("after a hand edit %+v", got)
	}
	other := t.TempDir()
	os.Remove(ProjectFile(ws))
	os.WriteFile(filepath.Join(other, "x.md"), []byte("- secret outside\n"), 0o644)
	if err := os.Symlink(filepath.Join(other, "x.md"), ProjectFile(ws)); err != nil {
		t.Skip(err)
	}
	if Accepted(ws, "") != nil || Append(ProjectFile(ws), e) == nil {
		t.Error("a symlinked memory file was read or written")
	}
}
