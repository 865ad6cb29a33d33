package chat

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// The chat's list shows just the rows in view, where their heights put
// them, and a scroll step fills only the rows that came into view.
func TestChatListShowsTheRowsInView(t *testing.T) {
	test.NewTempApp(t)
	const n = 1000
	updates := map[int]int{}
	l := NewList(func() int { return n },
		func() fyne.CanvasObject {
			r := canvas.NewRectangle(nil)
			r.SetMinSize(fyne.NewSize(10, 10))
			return r
		},
		func(id int, _ fyne.CanvasObject) { updates[id]++ })
	hs := make([]float32, n)
	for i := range hs {
		hs[i] = float32(20 + i%3*10) // 20, 30, 40…
	}
	l.SetHeights(hs)
	w := test.NewTempWindow(t, l)
	w.Resize(fyne.NewSize(300, 200))
	pad := theme.Padding()
	want := float32(0)
	for _, h := range hs {
		want += h + pad
	}
	if got := l.total(); got < want-pad-0.5 || got > want-pad+0.5 {
		t.Fatalf("total %.1f; want %.1f", got, want-pad)
	}

	l.ScrollToOffset(10_000)
	check := func() {
		t.Helper()
		off, vh := l.GetScrollOffset(), l.scroll.Size().Height
		if len(l.shown) == 0 {
			t.Fatal("no rows shown")
		}
		for _, s := range l.shown {
			top := l.tops[s.id]
			if top+hs[s.id]+pad <= off || top >= off+vh {
				t.Errorf("row %d (y %.0f) is shown outside the view %.0f–%.0f", s.id, top, off, off+vh)
			}
			if s.o.Position().Y != top || s.o.Size().Height != l.heightOf(s.id) {
				t.Errorf("row %d is at %v, %v; want y %.0f, height %.0f", s.id, s.o.Position(), s.o.Size(), top, l.heightOf(s.id))
			}
		}
		first, last := l.shown[0].id, l.shown[len(l.shown)-1].id
		if first > 0 && l.tops[first] > off {
			t.Errorf("row %d above the first shown is in view", first-1)
		}
		if last < n-1 && l.tops[last+1] < off+vh {
			t.Errorf("row %d below the last shown is in view", last+1)
		}
	}
	check()

	clear(updates)
	l.ScrollToOffset(l.GetScrollOffset() + 15)
	check()
	if len(updates) > 2 {
		t.Errorf("a 15 px step filled %d rows; want only those that came into view", len(updates))
	}

	// A row in view that grows moves the ones after it, and nothing else
	// is filled again.
	clear(updates)
	id := l.shown[1].id
	l.SetItemHeight(id, 90)
	hs[id] = 90
	check()
	if len(updates) > 2 {
		t.Errorf("one row's new height filled %d rows", len(updates))
	}

	l.ScrollTo(3)
	if off := l.GetScrollOffset(); off != l.tops[3] {
		t.Errorf("ScrollTo(3) left the list at %.0f; want the row's top %.0f", off, l.tops[3])
	}
	check()
	l.ScrollToBottom()
	check()
	if l.shown[len(l.shown)-1].id != n-1 {
		t.Errorf("at the bottom the last row shown is %d", l.shown[len(l.shown)-1].id)
	}
}
