package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/memory"
	"github.com/tally-dev/tally/engine/workbench"
	tw "github.com/tally-dev/tally/ui/widget"
)

// fakeStore plays the front door's memory: what waits, what was accepted,
// and the calls made.
type fakeStore struct {
	pending, accepted []memory.Entry
	calls             []string
	due               bool // what MemoryDue says
}

func (f *fakeStore) PendingMemory() ([]memory.Entry, error) {
	return slices.Clone(f.pending), nil
}
func (f *fakeStore) AcceptedMemory(string) []memory.Entry { return slices.Clone(f.accepted) }
func (f *fakeStore) take(id int) (memory.Entry, error) {
	i := slices.IndexFunc(f.pending, func(e memory.Entry) bool { return e.ID == id })
	if i < 0 {
		return memory.Entry{}, errors.New("no such entry")
	}
	e := f.pending[i]
	f.pending = slices.Delete(f.pending, i, i+1)
	return e, nil
}
func (f *fakeStore) AcceptMemory(id int) (memory.Entry, error) {
	f.calls = append(f.calls, "accept")
	e, err := f.take(id)
	if err == nil {
		f.accepted = append(f.accepted, e)
	}
	return e, err
}
func (f *fakeStore) EditMemory(id int, text string, kind memory.Kind) (memory.Entry, error) {
	f.calls = append(f.calls, "edit "+string(kind)+" "+text)
	for i := range f.pending {
		if f.pending[i].ID == id {
			f.pending[i].Text, f.pending[i].Kind = text, kind
			return f.pending[i], nil
		}
	}
	return memory.Entry{}, errors.New("no such entry")
}
func (f *fakeStore) RejectMemory(id int) error {
	f.calls = append(f.calls, "reject")
	_, err := f.take(id)
	return err
}
func (f *fakeStore) ProposeMemory(context.Context, *agent.Session) (memory.Proposal, error) {
	f.calls = append(f.calls, "propose")
	if f.due {
		f.pending = append(f.pending, entry(9, memory.Pitfall, "The parser needs a unary minus."))
		return memory.Proposal{Entries: f.pending[len(f.pending)-1:]}, nil
	}
	return memory.Proposal{}, errors.New("no session")
}
func (f *fakeStore) MemoryDue(*agent.Session) bool { return f.due }

// Leaving a session proposes memory from it first when it is due, then
// closes it and counts the new entry; when it is not due it only closes it.
func TestLeavingASessionProposesWhenMemoryIsDue(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	for _, due := range []bool{false, true} {
		store := &fakeStore{due: due}
		p := New(Host{Window: w, Work: func(work func() func()) { work()() }, Memory: store,
			Session: func() (*agent.Session, string) { return nil, "/ws" }})
		closed := 0
		p.Leave(&agent.Session{}, func(*agent.Session) { closed++ })
		proposed := slices.Contains(store.calls, "propose")
		if closed != 1 || proposed != due {
			t.Errorf("due %v: closed %d times, proposed %v", due, closed, proposed)
		}
		if want := map[bool]string{false: "", true: "1"}[due]; p.Button.Text != want {
			t.Errorf("due %v: the button says %q, want %q", due, p.Button.Text, want)
		}
	}
	var none *Panel
	closed := 0
	none.Leave(nil, func(*agent.Session) { closed++ })
	if closed != 1 {
		t.Error("a nil panel did not close the session")
	}
}

func entry(id int, kind memory.Kind, text string) memory.Entry {
	return memory.Entry{ID: id, Kind: kind, Text: text, Source: memory.Source{Session: "s1", Turn: id}, Workspace: "/ws"}
}

// labels returns the texts of every label on the window's overlays.
func labels(w fyne.Window) string {
	var b strings.Builder
	visit(w, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
	})
	return b.String()
}

// button finds the n-th (from 0) button labelled name on the overlays.
func button(t *testing.T, w fyne.Window, name string, n int) *widget.Button {
	t.Helper()
	var found []*widget.Button
	visit(w, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == name {
			found = append(found, b)
		}
	})
	if n >= len(found) {
		t.Fatalf("no button %q number %d (found %d)", name, n, len(found))
	}
	return found[n]
}

// TestPanelAcceptsEditsAndRejects: the button counts what waits; in the
// panel, Accept moves an entry to the accepted list with its tokens, Edit
// changes an entry's text and kind and keeps it waiting, Reject drops one.
func TestPanelAcceptsEditsAndRejects(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1000, 800))
	store := &fakeStore{pending: []memory.Entry{
		entry(1, memory.Build, "Run the tests with make check."),
		entry(2, memory.Convention, "Tabs in Go files."),
		entry(3, memory.Pitfall, "The clock is vendored."),
	}}
	p := New(Host{Window: w, Work: func(work func() func()) { work()() }, Memory: store,
		Session: func() (*agent.Session, string) { return nil, "/ws" }})
	if p.Button.Text != "3" {
		t.Errorf("the button says %q, want 3 waiting", p.Button.Text)
	}
	p.Show()
	got := labels(w)
	cost := workbench.MemoryCost(store.pending[0])
	if !strings.Contains(got, "[build] Run the tests with make check.") || !strings.Contains(got, "+"+strings.TrimSpace(tokens(cost, "").Text)) ||
		!strings.Contains(got, "from session s1, turn 1 · kept in /ws/.tally/memory.md") || !strings.Contains(got, "Accepted for /ws: 0 tokens") {
		t.Fatalf("the panel shows:\n%s", got)
	}
	if !button(t, w, "Propose from this session", 0).Disabled() {
		t.Error("Propose is enabled without a session")
	}

	test.Tap(button(t, w, "Accept", 0))
	got = labels(w)
	if len(store.pending) != 2 || !strings.Contains(got, "Remembered;") || p.Button.Text != "2" {
		t.Errorf("after Accept: pending %v, button %q, labels:\n%s", store.pending, p.Button.Text, got)
	}
	want := workbench.MemoryHeadCost() + cost
	if !strings.Contains(got, "Accepted for /ws: "+tokens(want, "").Text+" in the prefix") {
		t.Errorf("the accepted heading does not count %d tokens:\n%s", want, got)
	}

	test.Tap(button(t, w, "Edit", 0))
	sel := findSelect(w)
	if sel == nil {
		t.Fatal("no kind choice in the editor")
	}
	editor := findEntry(w)
	if editor == nil || editor.Text != "Tabs in Go files." {
		t.Fatalf("the editor holds %v", editor)
	}
	editor.SetText("Tabs in Go files; gofmt decides.")
	sel.SetSelected("pitfall")
	test.Tap(button(t, w, "Save", 0))
	if store.pending[0].Text != "Tabs in Go files; gofmt decides." || store.pending[0].Kind != memory.Pitfall || findEntry(w) != nil {
		t.Errorf("after Save: %+v, calls %q", store.pending[0], store.calls)
	}

	test.Tap(button(t, w, "Reject", 1))
	if len(store.pending) != 1 || store.pending[0].ID != 2 || !strings.Contains(labels(w), "remembered nowhere") {
		t.Errorf("after Reject: %+v", store.pending)
	}
	if !slices.Equal(store.calls, []string{"accept", "edit pitfall Tabs in Go files; gofmt decides.", "reject"}) {
		t.Errorf("calls %q", store.calls)
	}
}

func findEntry(w fyne.Window) *widget.Entry {
	var out *widget.Entry
	visit(w, func(o fyne.CanvasObject) {
		if e, ok := o.(*tw.EscEntry); ok && out == nil {
			out = &e.Entry
		}
	})
	return out
}

func findSelect(w fyne.Window) *widget.Select {
	var out *widget.Select
	visit(w, func(o fyne.CanvasObject) {
		if s, ok := o.(*widget.Select); ok {
			out = s
		}
	})
	return out
}

func visit(w fyne.Window, fn func(fyne.CanvasObject)) {
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		fn(o)
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	for _, o := range w.Canvas().Overlays().List() {
		walk(o)
	}
}
