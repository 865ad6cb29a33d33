package ui

import (
	"reflect"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/transcript"
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
	got := parseDiagnostics(body)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", got, want)
	}
	if d := parseDiagnostics("<diagnostics>\nno new errors or warnings in the edited files\n</diagnostics>"); len(d) != 0 {
		t.Errorf("a clean report parsed as %+v", d)
	}
	if s := cardDiagnosticLine(want[0]); s != "3:7 error undefined: x (compiler)" {
		t.Errorf("line %q", s)
	}
	if s := cardDiagnosticLine(want[3]); s != "warning file is not gofmt-formatted (gofmt)" {
		t.Errorf("line without a position %q", s)
	}
}

// Each card of the round gets the findings about its own file; a command
// gets those its command line names, or, alone in its round, those no
// card took; a card whose file has none gets nothing.
func TestDiagnosticsSpreadOverTheRoundsCards(t *testing.T) {
	card := func(name, args string) *chatItem {
		return &chatItem{kind: itemTool, call: transcript.ToolCall{Name: name, Arguments: args}}
	}
	edit := card("edit_file", `{"path":"./pkg/a.go","old_string":"x","new_string":"y"}`)
	write := card("write_file", `{"path":"/ws/my dir/b c.go","content":""}`)
	clean := card("write_file", `{"path":"clean.go","content":""}`)
	shell := card("run_shell", `{"command":"go generate ./..."}`)
	read := card("read_file", `{"path":"pkg/a.go"}`)
	ds := parseDiagnostics("pkg/a.go:3:7: error: one\npkg/a.go:4:1: warning: two\n" +
		"my dir/b c.go:1:1: warning: three\ngen/z.go:1:1: error: four\n")
	changed := spreadDiagnostics([]*chatItem{edit, write, clean, shell, read}, ds)
	if len(edit.diags) != 2 || len(write.diags) != 1 || len(clean.diags) != 0 || len(read.diags) != 0 {
		t.Fatalf("edit %d, write %d, clean %d, read %d findings", len(edit.diags), len(write.diags), len(clean.diags), len(read.diags))
	}
	if len(shell.diags) != 1 || shell.diags[0].Path != "gen/z.go" {
		t.Errorf("the round's only command got %+v", shell.diags)
	}
	if len(changed) != 3 {
		t.Errorf("%d cards changed, want 3", len(changed))
	}
	if s, imp := cardDiagnosticsBadge(edit.diags); s != "1 error · 1 warning" || imp != widget.DangerImportance {
		t.Errorf("badge %q (%v)", s, imp)
	}
	if s, imp := cardDiagnosticsBadge(write.diags); s != "1 warning" || imp != widget.WarningImportance {
		t.Errorf("badge %q (%v)", s, imp)
	}
}
