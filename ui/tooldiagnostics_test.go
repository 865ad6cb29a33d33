package ui

import (
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
)

// The lines of a <diagnostics> message, from the language servers and
// from the file-type checks, are read back per file.
func TestParseDiagnostics(t *testing.T) {
	body := "<diagnostics>\nnew in the edited files:\n" +
		"pkg/a.go:3:7: error: undefined: x (compiler)\n" +
		"my dir/b c.go:12:1: warning: unused variable: y\n" +
		"odd:name.py:2:4: hint: consider this\n" +
		"(2 more omitted)\n" +
		"not settled within 2s: gopls (their diagnostics may be incomplete)\n" +
		"</diagnostics>\n<diagnostics>\n" +
		"gofmt: ugly.go: file is not gofmt-formatted\n" +
		"go vet: bad/bad.go:5:2: fmt.Printf format %d has arg \"x\" of wrong type string\n" +
		"go vet: vet: ./c.go:9: something\n" +
		"go vet timed out after 20s\n" +
		"</diagnostics>"
	want := []lsp.Diagnostic{
		{Path: "pkg/a.go", Line: 3, Column: 7, Severity: "error", Message: "undefined: x (compiler)"},
		{Path: "my dir/b c.go", Line: 12, Column: 1, Severity: "warning", Message: "unused variable: y"},
		{Path: "odd:name.py", Line: 2, Column: 4, Severity: "hint", Message: "consider this"},
		{Path: "ugly.go", Severity: "warning", Message: "file is not gofmt-formatted", Source: "gofmt"},
		{Path: "bad/bad.go", Line: 5, Column: 2, Severity: "error", Message: "fmt.Printf format %d has arg \"x\" of wrong type string", Source: "go vet"},
		{Path: "c.go", Line: 9, Severity: "error", Message: "something", Source: "go vet: vet"},
	}
	got := chat.ParseDiagnostics(body)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", got, want)
	}
	if d := chat.ParseDiagnostics("<diagnostics>\nno new errors or warnings in the edited files\n</diagnostics>"); len(d) != 0 {
		t.Errorf("a clean report parsed as %+v", d)
	}
	if s := chat.CardDiagnosticLine(want[0]); s != "3:7 error undefined: x (compiler)" {
		t.Errorf("line %q", s)
	}
	if s := chat.CardDiagnosticLine(want[3]); s != "warning file is not gofmt-formatted (gofmt)" {
		t.Errorf("line without a position %q", s)
	}
}

// Each card of the round gets the findings about its own file; a command
// gets those its command line names, or, alone in its round, those no
// card took; a card whose file has none gets nothing.
func TestDiagnosticsSpreadOverTheRoundsCards(t *testing.T) {
	card := func(name, args string) *chat.Item {
		return &chat.Item{Kind: chat.ItemTool, Call: transcript.ToolCall{Name: name, Arguments: args}}
	}
	edit := card("edit_file", `{"path":"./pkg/a.go","old_string":"x","new_string":"y"}`)
	write := card("write_file", `{"path":"/ws/my dir/b c.go","content":""}`)
	clean := card("write_file", `{"path":"clean.go","content":""}`)
	shell := card("run_shell", `{"command":"go generate ./..."}`)
	read := card("read_file", `{"path":"pkg/a.go"}`)
	ds := chat.ParseDiagnostics("pkg/a.go:3:7: error: one\npkg/a.go:4:1: warning: two\n" +
		"my dir/b c.go:1:1: warning: three\ngen/z.go:1:1: error: four\n")
	changed := chat.SpreadDiagnostics([]*chat.Item{edit, write, clean, shell, read}, ds)
	if len(edit.Diags) != 2 || len(write.Diags) != 1 || len(clean.Diags) != 0 || len(read.Diags) != 0 {
		t.Fatalf("edit %d, write %d, clean %d, read %d findings", len(edit.Diags), len(write.Diags), len(clean.Diags), len(read.Diags))
	}
	if len(shell.Diags) != 1 || shell.Diags[0].Path != "gen/z.go" {
		t.Errorf("the round's only command got %+v", shell.Diags)
	}
	if len(changed) != 3 {
		t.Errorf("%d cards changed, want 3", len(changed))
	}
	if s, imp := chat.CardDiagnosticsBadge(edit.Diags); s != "1 error · 1 warning" || imp != widget.DangerImportance {
		t.Errorf("badge %q (%v)", s, imp)
	}
	if s, imp := chat.CardDiagnosticsBadge(write.Diags); s != "1 warning" || imp != widget.WarningImportance {
		t.Errorf("badge %q (%v)", s, imp)
	}
}

// A round that writes a badly formatted Go file and a clean one: the
// gofmt check's finding is shown on the first file's card, as a badge
// and an expandable list, not on the other's; the diagnostics row stays
// and expands to the whole message.
func TestToolCardShowsItsFilesDiagnostics(t *testing.T) {
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Skip("gofmt is not installed")
	}
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "write_file", Arguments: `{"path":"ugly.go","content":"package ugly\nfunc  F( ) {}\n"}`},
			{Name: "write_file", Arguments: `{"path":"fine.go","content":"package ugly\n\nfunc G() {}\n"}`},
		}},
		llmtest.Text("done"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("write the files")
	h.waitIdle()

	var ugly, fine, row *chat.Item
	for _, it := range h.ui.chat.Items {
		switch {
		case it.Kind == chat.ItemTool && strings.Contains(it.Call.Arguments, "ugly.go"):
			ugly = it
		case it.Kind == chat.ItemTool && strings.Contains(it.Call.Arguments, "fine.go"):
			fine = it
		case it.Kind == chat.ItemNotice && it.DetailName == "Diagnostics":
			row = it
		}
	}
	if ugly == nil || fine == nil || row == nil {
		t.Fatalf("cards %v %v, diagnostics row %v", ugly != nil, fine != nil, row != nil)
	}
	if !strings.Contains(row.Reasoning, "gofmt: ugly.go: file is not gofmt-formatted") {
		t.Fatalf("the diagnostics message is %q", row.Reasoning)
	}
	h.ui.chat.List.ScrollToTop()
	c := h.card(ugly)
	if c == nil {
		t.Fatal("the ugly.go card is not on screen")
	}
	if !c.DiagRow.Visible() || c.DiagBadge.Text != "1 warning" || c.DiagBadge.Importance != widget.WarningImportance {
		t.Errorf("badge %q (importance %v, visible %v)", c.DiagBadge.Text, c.DiagBadge.Importance, c.DiagBadge.Visible())
	}
	if !c.DiagToggle.Visible() || c.DiagList.Visible() {
		t.Fatalf("toggle visible %v, list visible %v before opening", c.DiagToggle.Visible(), c.DiagList.Visible())
	}
	test.Tap(c.DiagToggle)
	c = h.card(ugly)
	if c == nil || !c.DiagList.Visible() {
		t.Fatal("the opened list is not shown")
	}
	var lines []string
	for _, o := range c.DiagList.Objects {
		lines = append(lines, o.(*widget.Label).Text)
	}
	if want := []string{"warning file is not gofmt-formatted (gofmt)"}; !slices.Equal(lines, want) {
		t.Errorf("list %q, want %q", lines, want)
	}
	if f := h.card(fine); f == nil || f.DiagRow.Visible() || f.DiagList.Visible() {
		t.Error("the clean file's card shows diagnostics")
	}
	if !h.shows("diagnostics after a file write") {
		t.Error("the diagnostics row is not shown")
	}
}

// A language server's findings land on the card of the file they are
// about, coloured by the worst of them.
func TestToolCardShowsLanguageServerDiagnostics(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.fake","content":"fine\nBAD line\n  WARN here\n"}`),
		llmtest.Text("done"),
	))
	defer srv.Close()
	h, _ := lspSession(t, srv, map[string]string{"fake": "ok"}, map[string]string{"seed.fake": "x\n"})
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("write the file")
	h.waitIdle()
	it := h.toolItem("write_file")
	h.ui.chat.List.ScrollToTop()
	c := h.card(it)
	if c == nil {
		t.Fatal("the card is not on screen")
	}
	if c.DiagBadge.Text != "1 error · 1 warning" || c.DiagBadge.Importance != widget.DangerImportance {
		t.Errorf("badge %q (importance %v)", c.DiagBadge.Text, c.DiagBadge.Importance)
	}
	test.Tap(c.DiagToggle)
	c = h.card(it)
	var lines []string
	for _, o := range c.DiagList.Objects {
		lines = append(lines, o.(*widget.Label).Text)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "2:1 error BAD is not allowed") || !strings.HasPrefix(lines[1], "3:3 warning WARN is not allowed") {
		t.Errorf("list %q", lines)
	}
}
