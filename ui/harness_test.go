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
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/internal/fynetest"
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
	t   testing.TB
	win fyne.Window
	ui  *UI
	q   *queue
	dir string
}

// newHarness opens the window on a fresh data directory with env as the
// whole environment.
func newHarness(t testing.TB, env map[string]string) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	h := &harness{t: t, win: w, q: &queue{}, dir: t.TempDir()}
	h.ui = New(a, w, newBridgeWith(h.q.post), Options{DataDir: h.dir, Env: func(k string) string { return env[k] }})
	w.Resize(fyne.NewSize(1200, 800))
	t.Cleanup(func() { h.ui.Close() })
	h.waitFor("the session list", func() bool { return h.ui.sessions != nil && h.q.empty() })
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

// send types text into the prompt and presses Send.
func (h *harness) send(text string) {
	h.t.Helper()
	test.Type(h.ui.prompt, text)
	test.Tap(h.ui.sendB)
	if !h.ui.live.running {
		h.t.Fatalf("Send did not start a turn (prompt %q)", h.ui.prompt.Text)
	}
}

func (h *harness) waitIdle() {
	h.t.Helper()
	h.waitFor("the turn to end", func() bool { return !h.ui.live.running })
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

// card finds the on-screen tool card showing it.
func (h *harness) card(it *chatItem) *toolCard {
	var found *toolCard
	fynetest.Walk(h.win.Canvas().Content(), func(o fyne.CanvasObject) bool {
		if found != nil {
			return false
		}
		if v, ok := o.(*toolCard); ok && v.item == it && v.Visible() {
			found = v
			return false
		}
		return true
	})
	return found
}

// toolItem returns the chat item of the first tool call named name.
func (h *harness) toolItem(name string) *chatItem {
	for _, it := range h.ui.chat.items {
		if it.kind == itemTool && it.call.Name == name {
			return it
		}
	}
	return nil
}

func stringsContains(s, sub string) bool { return strings.Contains(s, sub) }

// pending waits for the card of a call waiting for approval.
func (h *harness) pending() *chatItem {
	h.t.Helper()
	var it *chatItem
	h.waitFor("an approval request", func() bool {
		for _, x := range h.ui.chat.items {
			if x.approval != nil {
				it = x
				return true
			}
		}
		return false
	})
	return it
}
