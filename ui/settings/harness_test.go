package settings

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// harness opens the settings in a test window over a fresh workbench. Work
// runs its work at once on the test goroutine and queues what it returns,
// which drain applies, as the window's UI goroutine would later.
type harness struct {
	t     *testing.T
	win   fyne.Window
	wb    *workbench.Workbench
	env   map[string]string
	queue []func()
}

// newHarness opens the workbench with (a copy of) env as the whole
// environment.
func newHarness(t *testing.T, env map[string]string) *harness {
	t.Helper()
	test.NewTempApp(t)
	h := &harness{t: t, win: test.NewTempWindow(t, widget.NewLabel("")), env: map[string]string{}}
	maps.Copy(h.env, env)
	h.win.Resize(fyne.NewSize(1200, 800))
	wb, _, err := workbench.Open(t.TempDir(), func(k string) string { return h.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wb.Close() })
	h.wb = wb
	return h
}

// host is what the window would give the dialog with no session shown.
func (h *harness) host() Host {
	return Host{
		Window: h.win, Work: h.work, Show: func(d dialog.Dialog) { d.Show() }, Saved: h.wb.Settings(),
		Resolve:  func(s workbench.Settings) workbench.Resolved { return h.wb.ResolveWith(workbench.Flags{}, s) },
		Shown:    func() bool { return false },
		OpenFile: func(string) {}, ShowMCP: func() {}, ShowHooks: func() {},
		Apply: h.apply,
	}
}

// apply stores what Save accepted, as the window does.
func (h *harness) apply(s workbench.Settings) {
	if err := h.wb.SaveSettings(s); err != nil {
		h.t.Error(err)
	}
}

func (h *harness) work(work func() func()) {
	if apply := work(); apply != nil {
		h.queue = append(h.queue, apply)
	}
}

// waitFor applies what the work queued until cond holds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	for range 100 {
		if cond() {
			return
		}
		q := h.queue
		h.queue = nil
		for _, fn := range q {
			fn()
		}
	}
	h.t.Fatalf("%s never happened", what)
}

// open opens the Settings dialog.
func (h *harness) open() *Form { return Open(h.host()) }

// entryWith finds the shown text field whose placeholder is ph.
func (h *harness) entryWith(ph string) *tw.EscEntry {
	for _, o := range h.win.Canvas().Overlays().List() {
		if e := fynetest.Find(o, func(e *tw.EscEntry) bool { return e.PlaceHolder == ph }); e != nil {
			return e
		}
	}
	return nil
}

// overlayShows reports whether the topmost dialog shows s in a label.
func (h *harness) overlayShows(s string) bool {
	return fynetest.Find(h.win.Canvas().Overlays().Top(), func(l *widget.Label) bool { return strings.Contains(l.Text, s) }) != nil
}

// buttonIn finds the button labelled text inside o.
func buttonIn(o fyne.CanvasObject, text string) *widget.Button {
	if o == nil {
		return nil
	}
	return fynetest.Button(o, text)
}

// lspRow is the section's row of the server name, or nil.
func lspRow(f *Form, name string) fyne.CanvasObject {
	for _, r := range f.lsp.rows.Objects {
		if rows := rowTexts(&fyne.Container{Objects: []fyne.CanvasObject{r}}); len(rows) == 1 && strings.HasPrefix(rows[0], name+"|") {
			return r
		}
	}
	return nil
}

// hasRow reports whether the section lists the row "name|handles|state".
func hasRow(f *Form, want string) bool {
	return slices.ContainsFunc(rowTexts(f.lsp.rows), func(r string) bool { return strings.HasPrefix(r, want) })
}

// rowTexts are the section's rows as "name|handles|state", with " — reason"
// when a reason is shown.
func rowTexts(rows *fyne.Container) []string {
	var out []string
	for _, r := range rows.Objects {
		var name, handles, state, reason string
		fynetest.Walk(r, func(o fyne.CanvasObject) bool {
			switch l, ok := o.(*widget.Label); {
			case !ok:
			case l.TextStyle.Bold:
				name = l.Text
			case l.Truncation != fyne.TextTruncateOff:
				handles = l.Text
			case l.Wrapping != fyne.TextWrapOff:
				reason = " — " + l.Text
			default:
				state = l.Text
			}
			return true
		})
		if name != "" {
			out = append(out, name+"|"+handles+"|"+state+reason)
		}
	}
	return out
}

// writeLSPConfig writes v as tally/lsp.json under the config folder cfg.
func writeLSPConfig(t *testing.T, cfg string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cfg, "tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "tally", lsp.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
