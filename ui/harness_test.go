package ui

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// queue stands in for Fyne's event loop in tests: engine goroutines post
// to it and the test goroutine, acting as the UI goroutine, drains it. All
// widget access therefore stays on one goroutine, as in the app.
type queue struct {
	mu  sync.Mutex
	fns []func()
}

func (q *queue) post(fn func()) {
	q.mu.Lock()
	q.fns = append(q.fns, fn)
	q.mu.Unlock()
}

// empty reports whether nothing is queued.
func (q *queue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.fns) == 0
}

func (q *queue) drain() {
	for {
		q.mu.Lock()
		fns := q.fns
		q.fns = nil
		q.mu.Unlock()
		if len(fns) == 0 {
			return
		}
		for _, fn := range fns {
			fn()
		}
	}
}

type harness struct {
	t     testing.TB
	win   fyne.Window
	ui    *UI
	q     *queue
	dir   string
	notes *notifyingApp // the desktop notifications the window sent
}

// notifyingApp is the test app, counting the desktop notifications sent
// through it.
type notifyingApp struct {
	fyne.App
	mu   sync.Mutex
	sent int
}

// SendNotification implements fyne.App.
func (a *notifyingApp) SendNotification(n *fyne.Notification) {
	a.mu.Lock()
	a.sent++
	a.mu.Unlock()
	a.App.SendNotification(n)
}

// count returns the notifications sent so far.
func (a *notifyingApp) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

// newHarness opens the window on a fresh data directory with env as the
// whole environment.
func newHarness(t testing.TB, env map[string]string) *harness {
	t.Helper()
	return openHarness(t, env, false)
}

// openHarness is newHarness; with serve the window also serves the
// command line's reads, as the app does.
func openHarness(t testing.TB, env map[string]string, serve bool) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	h := &harness{t: t, win: w, q: &queue{}, dir: t.TempDir(), notes: &notifyingApp{App: a}}
	o := Options{DataDir: h.dir, Env: func(k string) string { return env[k] }}
	if serve {
		o.Serve = func(wb *workbench.Workbench) (func(), error) { return cli.ServeReads(wb, h.dir) }
	}
	h.ui = New(h.notes, w, newBridgeWith(h.q.post), o)
	w.Resize(fyne.NewSize(1200, 800))
	t.Cleanup(func() { h.ui.Close() })
	h.waitFor("the session list", func() bool { return h.ui.sessions != nil && h.q.empty() })
	return h
}

// silentSession opens the window and a new session against a model that
// answers nothing, for tests that never send a prompt or play the
// engine's part themselves.
func silentSession(t *testing.T) *harness {
	t.Helper()
	srv := llmtest.New(nil)
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()
	return h
}

// endpoint returns an environment pointing at srv.
func endpoint(srv *llmtest.Server) map[string]string {
	return map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "dummy", "TALLY_MODEL": "test-model"}
}

// waitFor drains the UI queue until cond holds, failing after 20 s.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		h.q.drain()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// newSession creates a session in a fresh workspace and waits until it is
// open.
func (h *harness) newSession() string {
	h.t.Helper()
	ws := filepath.Join(h.dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		h.t.Fatal(err)
	}
	h.ui.createSession(ws, "test")
	h.waitFor("the new session to open", func() bool { return h.ui.live != nil && h.ui.live.sess != nil })
	return ws
}

// newCycle starts a new cycle of the shown session, as the New cycle
// button and its confirmation do.
func (h *harness) newCycle() {
	h.t.Helper()
	test.Tap(h.ui.actions.cycle)
	yes := buttonIn(h.win.Canvas().Overlays().Top(), "Yes")
	if yes == nil {
		h.t.Fatal("New cycle asked nothing")
	}
	test.Tap(yes)
}

// send types text into the prompt and presses Send.
func (h *harness) send(text string) {
	h.t.Helper()
	test.Type(h.ui.input.prompt, text)
	test.Tap(h.ui.input.send)
	if !h.ui.live.job.running {
		h.t.Fatalf("Send did not start a turn (prompt %q)", h.ui.input.prompt.Text)
	}
}

func (h *harness) waitIdle() {
	h.t.Helper()
	h.waitFor("the turn to end", func() bool { return !h.ui.live.job.running })
}

// texts walks the whole canvas (content and overlays) and returns every
// string a widget or canvas object shows.
func (h *harness) texts() []string {
	var out []string
	seen := map[fyne.CanvasObject]bool{}
	visit := func(o fyne.CanvasObject) bool {
		if seen[o] {
			return false
		}
		seen[o] = true
		switch v := o.(type) {
		case *canvas.Text:
			out = append(out, v.Text)
		case *widget.Label:
			out = append(out, v.Text)
		case *widget.Entry:
			out = append(out, v.Text, v.PlaceHolder)
		case *promptEntry:
			out = append(out, v.Text, v.PlaceHolder)
		case *widget.RichText:
			out = append(out, v.String())
		case *tw.Markdown:
			out = append(out, v.PlainText())
		case *widget.Button:
			out = append(out, v.Text)
		case *widget.Select:
			out = append(out, v.Selected)
		case *widget.Check:
			out = append(out, v.Text)
		}
		return true
	}
	c := h.win.Canvas()
	fynetest.Walk(c.Content(), visit)
	for _, o := range c.Overlays().List() {
		fynetest.Walk(o, visit)
	}
	out = append(out, h.win.Title())
	return out
}

func (h *harness) shows(s string) bool {
	for _, t := range h.texts() {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// shown returns the first visible T drawn in the window's overlays (its
// open dialogs: each view is a widget of its own), and whether there is
// one. A dialog that was closed is no longer drawn there.
func shown[T fyne.CanvasObject](h *harness) (T, bool) {
	var found T
	ok := false
	for _, o := range h.win.Canvas().Overlays().List() {
		fynetest.Walk(o, func(c fyne.CanvasObject) bool {
			if ok || !c.Visible() {
				return false
			}
			if v, is := c.(T); is {
				found, ok = v, true
			}
			return !ok
		})
	}
	return found, ok
}

// waitShown drains the UI queue until a T is shown in an overlay (see
// shown) and returns it.
func waitShown[T fyne.CanvasObject](h *harness, what string) T {
	h.t.Helper()
	var v T
	h.waitFor(what, func() bool {
		var ok bool
		v, ok = shown[T](h)
		return ok
	})
	return v
}

// tapInDialog taps the button labelled text of the topmost dialog.
func (h *harness) tapInDialog(text string) {
	h.t.Helper()
	b := buttonIn(h.win.Canvas().Overlays().Top(), text)
	if b == nil {
		h.t.Fatalf("the dialog has no %q button", text)
	}
	test.Tap(b)
}

// previewLists reports whether the compaction preview shown heads its
// before or after list with head ("Before — 5 messages").
func (h *harness) previewLists(head string) bool {
	top := h.win.Canvas().Overlays().Top()
	tabs := fynetest.Find[*container.AppTabs](top, nil)
	if tabs == nil {
		return false
	}
	was := tabs.SelectedIndex()
	defer tabs.SelectIndex(was)
	tabs.SelectIndex(1)
	return h.overlayShows(head)
}

// overlayShows reports whether the topmost dialog shows s in a label or a
// text field.
func (h *harness) overlayShows(s string) bool {
	found := false
	fynetest.Walk(h.win.Canvas().Overlays().Top(), func(c fyne.CanvasObject) bool {
		switch v := c.(type) {
		case *widget.Label:
			found = found || strings.Contains(v.Text, s)
		case *widget.Entry:
			found = found || strings.Contains(v.Text, s)
		}
		return !found
	})
	return found
}

// card finds the on-screen tool card showing it.
func (h *harness) card(it *chat.Item) *chat.ToolCard {
	var found *chat.ToolCard
	fynetest.Walk(h.win.Canvas().Content(), func(o fyne.CanvasObject) bool {
		if found != nil {
			return false
		}
		if v, ok := o.(*chat.ToolCard); ok && v.Item == it && v.Visible() {
			found = v
			return false
		}
		return true
	})
	return found
}

// toolItem returns the chat item of the first tool call named name.
func (h *harness) toolItem(name string) *chat.Item {
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemTool && it.Call.Name == name {
			return it
		}
	}
	return nil
}

// pending waits for the card of a call waiting for approval.
func (h *harness) pending() *chat.Item {
	h.t.Helper()
	var it *chat.Item
	h.waitFor("an approval request", func() bool {
		for _, x := range h.ui.chat.Items {
			if x.Approval != nil {
				it = x
				return true
			}
		}
		return false
	})
	return it
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
