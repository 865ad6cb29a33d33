package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	tw "github.com/tally-dev/tally/ui/widget"
)

// How the chat measures its rows and follows the bottom as they change.

// fitShown gives row id, just shown in r, the height it needs at the
// list's width: a row estimated so far is measured, and a measured one is
// checked where it is drawn (wrapped rich text can measure differently
// off screen). The list then keeps following the bottom if it was there.
func (c *chatView) fitShown(id int, r *messageRow) {
	it := r.item
	if c.width <= 0 || id >= c.list.rows() || c.items[id] != it {
		return
	}
	var h float32
	if it.measuredAt != c.width {
		h = c.measureRow(r, it)
	} else {
		r.Resize(fyne.NewSize(c.width, c.list.heightOf(id)))
		h = r.MinSize().Height
	}
	if d := h - c.list.heightOf(id); d > 1 || d < -1 {
		follow := c.following()
		c.list.SetItemHeight(id, h)
		if follow {
			c.bottomLater()
		}
	}
}

// bottomLater scrolls to the bottom after this frame, once however many
// rows asked for it.
func (c *chatView) bottomLater() {
	if c.toEnd || c.later == nil {
		return
	}
	c.toEnd = true
	c.later(func() {
		c.toEnd = false
		c.toBottom()
	})
}

// rebuild sets every row's height at once: rows near the end are
// measured exactly, the others estimated until shown (see fitShown).
func (c *chatView) rebuild(keepOffset bool) {
	off := c.list.GetScrollOffset()
	hs := make([]float32, 0, len(c.items))
	n := len(c.items)
	for i, it := range c.items {
		var h float32
		if n-i <= exactTail || it.expanded || it.reasonOn {
			h = c.measure(it)
		} else {
			h = c.estimate(it)
		}
		hs = append(hs, h)
	}
	c.list.SetHeights(hs)
	if keepOffset {
		c.list.ScrollToOffset(off)
	} else {
		c.toBottom()
		// The first layout of a new list may come after this call, with
		// another viewport height: scroll again once it is laid out.
		c.stickBottom = true
		c.later(func() {
			c.toBottom()
			c.stickBottom = false
		})
	}
}

// exactTail is how many rows at the end are measured exactly when a
// session opens; the rest are estimated until they scroll into view.
const exactTail = 60

// heightChanged keeps the view at the bottom when the chat area grows or
// shrinks, and after a freshly loaded conversation is first laid out.
func (c *chatView) heightChanged() {
	was := c.endShown // as before the resize: the layout runs first
	c.later(func() {
		if c.stickBottom || was || c.following() {
			c.toBottom()
		}
	})
}

func (c *chatView) widthChanged(w float32) {
	was := c.endShown
	c.later(func() {
		if c.width == w {
			return
		}
		c.width = w
		c.remeasureAll()
		if was {
			c.toBottom()
		}
	})
}

// remeasureAll measures every row at the current width.
func (c *chatView) remeasureAll() {
	if c.width <= 0 {
		return
	}
	c.rebuild(true)
}

// estimate guesses the height of it from its text length, calibrated on
// one-line rows measured at the current width.
func (c *chatView) estimate(it *chatItem) float32 {
	if c.estW != c.width || c.est == nil {
		c.estW = c.width
		c.est = map[itemKind]float32{}
		for _, k := range []itemKind{itemUser, itemAssistant, itemNotice, itemRebuild, itemCycle, itemRewind} {
			c.est[k] = c.measure(&chatItem{kind: k, text: "x", md: tw.ParseDoc("x")})
		}
		two := c.measure(&chatItem{kind: itemUser, text: "x\nx"})
		c.lineH = two - c.est[itemUser]
		c.charW = fyne.MeasureText("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ", theme.TextSize(), fyne.TextStyle{}).Width / 37
	}
	switch it.kind {
	case itemTool:
		key := itemKind(10)
		if it.hasResult {
			key++
		}
		if it.decided != "" {
			key += 2
		}
		h, ok := c.est[key]
		if !ok {
			h = c.measure(&chatItem{kind: itemTool, title: "x", status: toolOK, hasResult: it.hasResult, resultLen: 1, decided: it.decided})
			c.est[key] = h
		}
		return h
	}
	base := c.est[it.kind]
	if len(it.images) > 0 {
		base += thumbH + c.lineH + theme.Padding()*2 // a row of thumbnails with captions
	}
	if (it.kind == itemAssistant || it.kind == itemRebuild) && it.reasoning != "" || it.kind == itemRewind && len(it.pastItems) > 0 {
		base += c.lineH + theme.Padding()*2
	}
	perLine := int((c.width - 4*theme.Padding()) / c.charW)
	if perLine < 10 {
		perLine = 10
	}
	lines := 0
	for _, para := range strings.Split(it.text, "\n") {
		lines += 1 + len([]rune(para))/perLine
	}
	if it.kind == itemAssistant && !it.streaming {
		lines += strings.Count(it.text, "\n\n") // Markdown paragraph spacing
	}
	return base + float32(max(lines-1, 0))*c.lineH
}

// measure returns the height of it at the current width, measured off
// screen.
func (c *chatView) measure(it *chatItem) float32 {
	c.measurer.set(it)
	return c.measureRow(c.measurer, it)
}

// measureRow returns the height of row r, showing it, at the current
// width.
func (c *chatView) measureRow(r *messageRow, it *chatItem) float32 {
	w := c.width
	if w <= 0 {
		w = 600
	}
	r.Resize(fyne.NewSize(w, 10))
	h := r.MinSize().Height
	r.Resize(fyne.NewSize(w, h))
	if c.width > 0 {
		it.measuredAt = c.width
	}
	return r.MinSize().Height
}

func (c *chatView) setHeight(i int) {
	c.list.SetItemHeight(i, c.measure(c.items[i]))
}
