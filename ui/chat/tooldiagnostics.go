package chat

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The diagnostics of a round on its tool cards. After a round of tool
// calls that wrote files the engine adds one <diagnostics> message; its
// lines are read back here and each edit_file, write_file or run_shell
// card of that round shows those about its file: a count badge coloured
// by the worst severity and an expandable list, "line:col severity
// message". The message itself stays in the chat as a collapsed row.

// diagSeverities are the severities a language server's line can carry.
var diagSeverities = []string{"error", "warning", "info", "hint"}

// ParseDiagnostics reads the findings of a <diagnostics> message, one per
// line, in two forms:
//
//   - a language server's, "path:line:col: severity: message (source)";
//   - a file-type check's, "check: path: message" (gofmt) or
//     "check: path:line:col: message" (go vet), with the check's name kept
//     as the source. A finding with a position counts as an error, one
//     without (an unformatted file) as a warning.
//
// The path runs up to the first ":<digits>:" (it may hold spaces). Tags,
// headings, notes and any line in neither form are skipped.
func ParseDiagnostics(body string) []lsp.Diagnostic {
	var out []lsp.Diagnostic
	for _, l := range strings.Split(body, "\n") {
		if d, ok := parseDiagnosticLine(strings.TrimSpace(l)); ok {
			out = append(out, d)
		}
	}
	return out
}

// parseDiagnosticLine reads one line of a <diagnostics> message.
func parseDiagnosticLine(l string) (lsp.Diagnostic, bool) {
	if l == "" || strings.HasPrefix(l, "<") || strings.HasPrefix(l, "(") {
		return lsp.Diagnostic{}, false
	}
	if p, line, col, rest, ok := cutPosition(l); ok {
		for _, sev := range diagSeverities {
			if msg, found := strings.CutPrefix(rest, sev+": "); found {
				return lsp.Diagnostic{Path: cleanDiagPath(p), Line: line, Column: col, Severity: sev, Message: msg}, true
			}
		}
		// A check's finding with a position: "go vet: a.go:3:2: message".
		// The name is all before the last ": " ("go vet: vet: a.go").
		if i := strings.LastIndex(p, ": "); i > 0 && i+2 < len(p) && rest != "" {
			return lsp.Diagnostic{Path: cleanDiagPath(p[i+2:]), Line: line, Column: col, Severity: "error", Message: rest, Source: p[:i]}, true
		}
		return lsp.Diagnostic{}, false
	}
	// A check's finding about a whole file: "gofmt: a.go: message".
	name, rest, ok := strings.Cut(l, ": ")
	if !ok || name == "" || strings.Contains(name, "/") {
		return lsp.Diagnostic{}, false
	}
	file, msg, ok := strings.Cut(rest, ": ")
	if !ok || file == "" || msg == "" {
		return lsp.Diagnostic{}, false
	}
	return lsp.Diagnostic{Path: cleanDiagPath(file), Severity: "warning", Message: msg, Source: name}, true
}

// cutPosition splits l at its first ":<line>:" (and the ":<col>:" after
// it, when there is one) into the text before, the position and what
// follows the ": ".
func cutPosition(l string) (before string, line, col int, rest string, ok bool) {
	for i := 0; i < len(l); i++ {
		if l[i] != ':' || i == 0 {
			continue
		}
		j := i + 1
		for j < len(l) && l[j] >= '0' && l[j] <= '9' {
			j++
		}
		if j == i+1 || j >= len(l) || l[j] != ':' {
			continue
		}
		line, _ = strconv.Atoi(l[i+1 : j])
		after := l[j+1:]
		k := 0
		for k < len(after) && after[k] >= '0' && after[k] <= '9' {
			k++
		}
		if k > 0 && k < len(after) && after[k] == ':' {
			col, _ = strconv.Atoi(after[:k])
			after = after[k+1:]
		}
		return l[:i], line, col, strings.TrimSpace(after), true
	}
	return "", 0, 0, "", false
}

// cleanDiagPath is p slash-separated and cleaned, as the cards' paths are
// compared.
func cleanDiagPath(p string) string {
	return path.Clean(filepath.ToSlash(strings.TrimSpace(p)))
}

// samePath reports whether a card's path (as the model gave it, relative
// or absolute) names the diagnostics' file (workspace-relative).
func samePath(card, diag string) bool {
	if card == "" || diag == "" {
		return false
	}
	card = cleanDiagPath(card)
	return card == diag || strings.HasSuffix(card, "/"+diag)
}

// callPath is the file an edit_file or write_file call names.
func callPath(args string) string {
	var m struct {
		Path string `json:"path"` // the file the call wrote
	}
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	return m.Path
}

// callCommand is the command of a run_shell call.
func callCommand(args string) string {
	var m struct {
		Command string `json:"command"` // the command the call ran
	}
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	return m.Command
}

// SpreadDiagnostics gives each card of round the findings about its file,
// replacing what it had. An edit_file or write_file card takes those of
// its path; a run_shell card those of the paths its command names and,
// when it is the round's only command, those no card took (the engine
// checks what a command wrote without saying which command wrote it). It
// returns the cards whose findings changed.
func SpreadDiagnostics(round []*Item, ds []lsp.Diagnostic) []*Item {
	taken := make([]bool, len(ds))
	got := map[*Item][]lsp.Diagnostic{}
	var shells []*Item
	for _, it := range round {
		switch it.Call.Name {
		case "edit_file", "write_file":
			p := callPath(it.Call.Arguments)
			for i, d := range ds {
				if samePath(p, d.Path) {
					got[it] = append(got[it], d)
					taken[i] = true
				}
			}
		case "run_shell":
			shells = append(shells, it)
			cmd := callCommand(it.Call.Arguments)
			for i, d := range ds {
				if strings.Contains(cmd, d.Path) {
					got[it] = append(got[it], d)
					taken[i] = true
				}
			}
		}
	}
	if len(shells) == 1 {
		for i, d := range ds {
			if !taken[i] {
				got[shells[0]] = append(got[shells[0]], d)
			}
		}
	}
	var changed []*Item
	for _, it := range round {
		if len(got[it]) > 0 || len(it.Diags) > 0 {
			it.Diags = got[it]
			changed = append(changed, it)
		}
	}
	return changed
}

// CardDiagnosticsBadge counts ds by severity, "2 errors · 1 warning", and
// gives the colour of the worst one.
func CardDiagnosticsBadge(ds []lsp.Diagnostic) (string, widget.Importance) {
	var errs, warns, notes int
	for _, d := range ds {
		switch d.Severity {
		case "error":
			errs++
		case "warning":
			warns++
		default:
			notes++
		}
	}
	var parts []string
	for _, c := range []struct {
		n    int
		noun string
	}{{errs, "error"}, {warns, "warning"}, {notes, "note"}} {
		if c.n > 0 {
			parts = append(parts, text.Plural(c.n, c.noun))
		}
	}
	imp := widget.LowImportance
	switch {
	case errs > 0:
		imp = widget.DangerImportance
	case warns > 0:
		imp = widget.WarningImportance
	}
	return strings.Join(parts, " · "), imp
}

// CardDiagnosticLine is one listed finding: "line:col severity message",
// without the position when the check gave none, with its source.
func CardDiagnosticLine(d lsp.Diagnostic) string {
	s := d.Severity + " " + text.OneLine(d.Message, 300)
	if d.Line > 0 {
		s = fmt.Sprintf("%d:%d %s", d.Line, d.Column, s)
	}
	if d.Source != "" {
		s += " (" + d.Source + ")"
	}
	return s
}

// diagnosticLabels are the card's list of ds, each coloured by its
// severity, at most maxListedDiagnostics of them and a count of the rest.
func diagnosticLabels(ds []lsp.Diagnostic) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	for i, d := range ds {
		if i == tw.MaxListedDiagnostics {
			out = append(out, &widget.Label{Text: fmt.Sprintf("(%d more)", len(ds)-i), Importance: widget.LowImportance})
			break
		}
		imp := widget.LowImportance
		if d.Severity == "error" || d.Severity == "warning" {
			imp = tw.SeverityImportance(d.Severity)
		}
		out = append(out, &widget.Label{Text: CardDiagnosticLine(d), Wrapping: fyne.TextWrapWord,
			TextStyle: fyne.TextStyle{Monospace: true}, Importance: imp})
	}
	return out
}
