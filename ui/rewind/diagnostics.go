package rewind

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The Changes view's diagnostics: each changed file that a language
// server handles gets a badge with its current errors and warnings and,
// under its diff, the list of them, "line:col severity message". They
// are asked for off the UI goroutine when the view opens; the servers'
// wait is bounded.

// changeDiagnosticsWait bounds the whole look at the changed files.
const changeDiagnosticsWait = 20 * time.Second

// changeDiagnostics holds the Changes view's badges and lists, by path.
type changeDiagnostics struct {
	badges map[string]*widget.Label
	lists  map[string]*Fold
	bodies map[string]*fyne.Container
}

// newChangeDiagnostics returns the view's empty badges and lists.
func newChangeDiagnostics() *changeDiagnostics {
	return &changeDiagnostics{badges: map[string]*widget.Label{}, lists: map[string]*Fold{}, bodies: map[string]*fyne.Container{}}
}

// badge is the count badge of path, hidden until the servers are asked.
func (d *changeDiagnostics) badge(path string) fyne.CanvasObject {
	l := &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
	l.Hide()
	d.badges[path] = l
	return l
}

// list is the expandable list of path's errors and warnings, hidden
// while there is none.
func (d *changeDiagnostics) list(path string) fyne.CanvasObject {
	body := container.NewVBox()
	fold := NewFold("Errors and warnings", body, false)
	fold.Hide()
	d.lists[path], d.bodies[path] = fold, body
	return fold
}

// fetchDiagnostics asks the session's language servers for the current
// diagnostics of the files of v that one of them handles (deleted files
// left out), off the UI goroutine, and shows them.
func (vs *Views) fetchDiagnostics(s Session, v *Changes) {
	if s == nil || s.Engine() == nil || v.diags == nil {
		return
	}
	ls := s.Engine().LanguageServers()
	status := ls.Status() // never waits
	var paths []string
	for _, c := range v.changes {
		if !c.Diff.Deleted && len(serversFor(status, c.Path)) > 0 {
			paths = append(paths, c.Path)
		}
	}
	if len(paths) == 0 {
		return
	}
	for _, p := range paths {
		v.diags.checking(p)
	}
	vs.h.Work(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), changeDiagnosticsWait)
		defer cancel()
		set, rep := ls.Diagnostics(ctx, paths...)
		return func() { v.diags.show(status, paths, set, rep) }
	})
}

// serversFor are the names of the servers of status that handle path and
// can answer for it (neither failed nor missing).
func serversFor(status []lsp.ServerStatus, path string) []string {
	var out []string
	for _, st := range status {
		if st.State == lsp.StateFailed || st.State == lsp.StateNotInstalled {
			continue
		}
		if slices.ContainsFunc(st.Extensions, func(ext string) bool { return strings.HasSuffix(path, ext) }) {
			out = append(out, st.Name)
		}
	}
	return out
}

// checking marks path's badge as waiting for the servers.
func (d *changeDiagnostics) checking(path string) {
	if b := d.badges[path]; b != nil {
		b.Importance = widget.LowImportance
		b.SetText("checking…")
		b.Show()
	}
}

// show fills the badges and lists of paths from set; a file whose server
// did not settle in time (rep.Late) says its list may be incomplete.
func (d *changeDiagnostics) show(status []lsp.ServerStatus, paths []string, set lsp.Set, rep lsp.Report) {
	found := map[string][]lsp.Diagnostic{}
	for p, ds := range set {
		found[filepath.ToSlash(filepath.Clean(p))] = ds
	}
	for _, p := range paths {
		b, fold, body := d.badges[p], d.lists[p], d.bodies[p]
		if b == nil || fold == nil {
			continue
		}
		ds := errorsAndWarnings(found[filepath.ToSlash(filepath.Clean(p))])
		late := slices.ContainsFunc(serversFor(status, p), func(n string) bool { return slices.Contains(rep.Late, n) })
		b.SetText(diagnosticsBadge(ds, late))
		b.Importance = diagnosticsImportance(ds)
		b.Refresh()
		body.Objects = nil
		for i, dg := range ds {
			if i == tw.MaxListedDiagnostics {
				body.Add(&widget.Label{Text: fmt.Sprintf("(%d more)", len(ds)-i), Importance: widget.LowImportance})
				break
			}
			body.Add(&widget.Label{Text: diagnosticLine(dg), Wrapping: fyne.TextWrapWord, Importance: tw.SeverityImportance(dg.Severity)})
		}
		body.Refresh()
		fold.SetTitle(fmt.Sprintf("Errors and warnings (%d)", len(ds)))
		if len(ds) > 0 {
			fold.Show()
		} else {
			fold.Hide()
		}
	}
}

// errorsAndWarnings keeps the errors and warnings of ds, errors first,
// each group in the order of the file.
func errorsAndWarnings(ds []lsp.Diagnostic) []lsp.Diagnostic {
	var errs, warns []lsp.Diagnostic
	for _, d := range ds {
		switch d.Severity {
		case "error":
			errs = append(errs, d)
		case "warning":
			warns = append(warns, d)
		}
	}
	return append(errs, warns...)
}

// diagnosticsBadge counts ds: "2 errors · 1 warning", or "no errors or
// warnings"; late adds that the count may be incomplete.
func diagnosticsBadge(ds []lsp.Diagnostic, late bool) string {
	var errs, warns int
	for _, d := range ds {
		if d.Severity == "error" {
			errs++
		} else {
			warns++
		}
	}
	var parts []string
	if errs > 0 {
		parts = append(parts, text.Plural(errs, "error"))
	}
	if warns > 0 {
		parts = append(parts, text.Plural(warns, "warning"))
	}
	s := strings.Join(parts, " · ")
	if s == "" {
		s = "no errors or warnings"
	}
	if late {
		s += " (the server is still checking; may be incomplete)"
	}
	return s
}

// diagnosticsImportance is the badge's colour: danger with an error,
// warning with only warnings, success with none.
func diagnosticsImportance(ds []lsp.Diagnostic) widget.Importance {
	imp := widget.SuccessImportance
	for _, d := range ds {
		if d.Severity == "error" {
			return widget.DangerImportance
		}
		imp = widget.WarningImportance
	}
	return imp
}

// diagnosticLine is one listed diagnostic: "line:col severity message",
// with the message on one line.
func diagnosticLine(d lsp.Diagnostic) string {
	return fmt.Sprintf("%d:%d %s %s", d.Line, d.Column, d.Severity, text.OneLine(d.Message, 300))
}
