package chat

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
func (c *View) fitShown(id int, r *MessageRow) {
	it := r.Item
	if c.width <= 0 || id >= c.List.rows() || c.Items[id] != it {
		return
	}
	var h float32
	if it.measuredAt != c.width {
		h = c.measureRow(r, it)
	} else {
		r.Resize(fyne.NewSize(c.width, c.List.heightOf(id)))
		r.layParts()
		h = r.MinSize().Height
	}
	if d := h - c.List.heightOf(id); d > 1 || d < -1 {
		follow := c.following()
		c.List.SetItemHeight(id, h)
		if follow {
			c.bottomLater()
		}
	}
}

// bottomLater scrolls to the bottom after this frame, once however many
// rows asked for it.
func (c *View) bottomLater() {
	if c.toEnd || c.later == nil {
		return
	}
	c.toEnd = true
	c.later(func() {
		c.toEnd = false
		c.ToBottom()
	})
}

// rebuild sets every row's height at once: rows near the end are
// measured exactly, the others estimated until shown (see fitShown).
func (c *View) rebuild(keepOffset bool) {
	off := c.List.GetScrollOffset()
	hs := make([]float32, 0, len(c.Items))
	n := len(c.Items)
	for i, it := range c.Items {
		var h float32
		if n-i <= exactTail || it.Expanded || it.ReasonOn {
			h = c.measure(it)
		} else {
			h = c.estimate(it)
		}
		hs = append(hs, h)
	}
	c.List.SetHeights(hs)
	if keepOffset {
		c.List.ScrollToOffset(off)
	} else {
		c.ToBottom()
		// The first layout of a new list may come after this call, with
		// another viewport height: scroll again once it is laid out.
		c.stickBottom = true
		c.later(func() {
			c.ToBottom()
			c.stickBottom = false
		})
	}
}

// exactTail is how many rows at the end are measured exactly when a
// session opens; the rest are estimated until they scroll into view.
const exactTail = 60

// heightChanged keeps the view at the bottom when the chat area grows or
// shrinks, and after a freshly loaded conversation is first laid out.
func (c *View) heightChanged() {
	was := c.endShown // as before the resize: the layout runs first
	c.later(func() {
		if c.stickBottom || was || c.following() {
			c.ToBottom()
		}
	})
}

func (c *View) widthChanged(w float32) {
	was := c.endShown
	c.later(func() {
		if c.width == w {
			return
		}
		c.width = w
		c.remeasureAll()
		if was {
			c.ToBottom()
		}
	})
}

// ThemeChanged redraws every row for the theme now in use, its colours
// and its text size: the rows in view at once, the others as they come
// into view (each is measured again then, as the text size may have
// changed its height).
func (c *View) ThemeChanged() {
	c.est = nil
	for _, it := range c.Items {
		it.measuredAt = 0
	}
	c.List.template = nil // the empty row's height
	c.measurer.restyle()
	if c.width > 0 {
		c.rebuild(true)
	}
	c.List.Refresh()
}

// remeasureAll measures every row at the current width.
func (c *View) remeasureAll() {
	if c.width <= 0 {
		return
	}
	c.rebuild(true)
}

// estimate guesses the height of it from its text length, calibrated on
// one-line rows measured at the current width.
func (c *View) estimate(it *Item) float32 {
	if c.estW != c.width || c.est == nil {
		c.estW = c.width
		c.est = map[ItemKind]float32{}
		for _, k := range []ItemKind{ItemUser, ItemAssistant, ItemNotice, ItemRebuild, ItemCycle, itemRewind} {
			c.est[k] = c.measure(&Item{Kind: k, Text: "x", md: tw.ParseDoc("x")})
		}
		two := c.measure(&Item{Kind: ItemUser, Text: "x\nx"})
		c.lineH = two - c.est[ItemUser]
		c.charW = fyne.MeasureText("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ", theme.TextSize(), fyne.TextStyle{}).Width / 37
	}
	switch it.Kind {
	case ItemTool:
		key := ItemKind(10)
		if it.hasResult {
			key++
		}
		if it.Decided != "" {
			key += 2
		}
		h, ok := c.est[key]
		if !ok {
			h = c.measure(&Item{Kind: ItemTool, Title: "x", Status: toolOK, hasResult: it.hasResult, resultLen: 1, Decided: it.Decided})
			c.est[key] = h
		}
		return h
	}
	base := c.est[it.Kind]
	if len(it.Images) > 0 {
		base += ThumbH + c.lineH + theme.Padding()*2 // a row of thumbnails with captions
	}
	if (it.Kind == ItemAssistant || it.Kind == ItemRebuild) && it.Reasoning != "" || it.Kind == itemRewind && len(it.PastItems) > 0 {
		base += c.lineH + theme.Padding()*2
	}
	perLine := int((c.width - 4*theme.Padding()) / c.charW)
	if perLine < 10 {
		perLine = 10
	}
	lines := 0
	for _, para := range strings.Split(it.Text, "\n") {
		lines += 1 + len([]rune(para))/perLine
	}
	if it.Kind == ItemAssistant && !it.Streaming {
		lines += strings.Count(it.Text, "\n\n") // Markdown paragraph spacing
	}
	return base + float32(max(lines-1, 0))*c.lineH
}

// layParts lays the row's parts out again at its width, even when the
// row's size did not change. The list recycles rows: a part that was
// hidden while r showed another item kept the width it had when last
// shown, and measured there it is too short or too tall (a window since
// made narrower measured a compaction row's text a line or two short,
// and the card under it covered its last lines). Parts whose size is
// right are left as they are.
func (r *MessageRow) layParts() {
	if r.body != nil && r.body.Layout != nil {
		r.body.Layout.Layout(r.body.Objects, r.body.Size())
	}
}

// measure returns the height of it at the current width, measured off
// screen.
func (c *View) measure(it *Item) float32 {
	c.measurer.Set(it)
	return c.measureRow(c.measurer, it)
}

// measureRow returns the height of row r, showing it, at the current
// width.
func (c *View) measureRow(r *MessageRow, it *Item) float32 {
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

func (c *View) setHeight(i int) {
	c.List.SetItemHeight(i, c.measure(c.Items[i]))
}
