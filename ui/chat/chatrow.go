package chat

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// MessageRow draws any chat item; one row type keeps the list's recycling
// simple and lets the same widget measure rows off screen.
type MessageRow struct {
	widget.BaseWidget

	chat    *View
	Item    *Item // the row shown
	bg      *canvas.Rectangle
	Hover   *canvas.Rectangle // shown while the pointer is over the row
	role    *widget.Label
	copyB   *widget.Button
	rewindB *widget.Button // "Rewind to here…" on the user's messages
	forkB   *widget.Button // "Fork…" on the user's messages: a new session from this turn
	header  *fyne.Container
	Reason  *widget.Button // unfolds the reasoning
	Fold    *widget.Button // expands a rewind's folded messages
	veil    *canvas.Rectangle
	rtext   *widget.Label
	Plain   *widget.Label // the text while it streams
	rich    *tw.Markdown
	card    *ToolCard
	Pics    *fyne.Container // the message's thumbnails
	body    *fyne.Container // the parts above, top to bottom (see layParts)
}

// NewMessageRow returns a row of c, to be filled by its list.
func NewMessageRow(c *View) *MessageRow {
	r := &MessageRow{chat: c}
	r.bg = canvas.NewRectangle(nil)
	r.Hover = canvas.NewRectangle(nil)
	r.Hover.Hide()
	r.role = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
	r.copyB = &widget.Button{Icon: theme.ContentCopyIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if r.Item != nil && r.chat.copy != nil {
			r.chat.copy(r.Item.copyText())
		}
	}}
	r.rewindB = &widget.Button{Text: "Rewind to here…", Icon: theme.HistoryIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if r.Item != nil && r.chat.OnRewind != nil {
			r.chat.OnRewind(r.Item)
		}
	}}
	r.forkB = &widget.Button{Text: "Fork…", Icon: theme.MailForwardIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if r.Item != nil && r.chat.OnFork != nil {
			r.chat.OnFork(r.Item)
		}
	}}
	r.forkB.Hide() // shown by Set on the rows that have it: the list's template row does not widen the chat for it
	r.header = container.NewBorder(nil, nil, nil, container.NewHBox(r.rewindB, r.forkB, r.copyB), r.role)
	r.Reason = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading, OnTapped: func() {
		switch {
		case r.Item == nil:
		case r.Item.Kind == ItemCycle:
			r.chat.ToggleFold(r.Item)
		default:
			r.chat.ToggleReasoning(r.Item)
		}
	}}
	r.Fold = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading, OnTapped: func() {
		if r.Item != nil {
			r.chat.ToggleFold(r.Item)
		}
	}}
	r.veil = canvas.NewRectangle(nil)
	r.restyle()
	// Italic tells reasoning apart; the low-importance colour (the theme's
	// disabled colour) would be unreadable on the light theme.
	r.rtext = &widget.Label{TextStyle: fyne.TextStyle{Italic: true}, Wrapping: fyne.TextWrapWord}
	r.Plain = &widget.Label{Wrapping: fyne.TextWrapWord, Selectable: true}
	r.rich = tw.NewMarkdown(nil)
	r.Pics = container.New(&tw.FlowLayout{})
	r.card = newToolCard(func(it *Item, d tool.Decision) {
		if r.chat.onDecide != nil {
			r.chat.onDecide(it, d)
		}
	}, func(it *Item) { r.chat.ToggleResult(it) }, [2]func(*Item){
		func(it *Item) { r.chat.OnChild[0](it) }, func(it *Item) { r.chat.OnChild[1](it) }})
	r.card.onDiags = func(it *Item) { r.chat.toggleDiagnostics(it) }
	r.card.onCommand = func(it *Item) {
		if r.chat.OnCommand != nil {
			r.chat.OnCommand(it)
		}
	}
	r.ExtendBaseWidget(r)
	return r
}

// Set shows it in the row.
func (r *MessageRow) Set(it *Item) {
	r.Item = it
	tw.ShowIf(r.bg, it.Kind == ItemUser)
	tw.ShowIf(r.header, it.Kind == ItemUser || it.Kind == ItemAssistant)
	tw.ShowIf(r.card, it.Kind == ItemTool)
	hasReason := (it.Kind == ItemAssistant || it.Kind == ItemRebuild || it.Kind == ItemNotice) && it.Reasoning != ""
	tw.ShowIf(r.Reason, hasReason)
	tw.ShowIf(r.rtext, hasReason && it.ReasonOn)
	plain := it.Kind == ItemUser || it.Kind == ItemNotice || it.Kind == ItemRebuild || it.Kind == ItemCycle || it.Kind == itemRewind || (it.Kind == ItemAssistant && it.Streaming && it.Text != "")
	var doc *tw.Doc
	if it.Kind == ItemAssistant && !it.Streaming {
		doc = r.chat.doc(it)
	}
	rich := doc != nil
	tw.ShowIf(r.Plain, plain)
	tw.ShowIf(r.rich, rich)
	tw.ShowIf(r.rewindB, it.Kind == ItemUser && (it.LogIndex >= 0 || !it.Sent.IsZero()) && r.chat.OnRewind != nil)
	tw.ShowIf(r.forkB, it.Kind == ItemUser && !it.Superseded && (it.LogIndex >= 0 || !it.Sent.IsZero()) && r.chat.OnFork != nil)
	tw.ShowIf(r.Fold, it.Kind == itemRewind && len(it.PastItems) > 0 || it.Kind == ItemCycle)
	tw.ShowIf(r.veil, it.Superseded)
	r.restyle()
	switch it.Kind {
	case ItemUser:
		r.role.SetText("You" + supersededTag(it))
	case ItemAssistant:
		switch {
		case it.Streaming:
			r.role.SetText("Assistant · writing…")
		case it.Unsaved:
			r.role.SetText("Assistant · stopped by you · not kept in the conversation")
		case it.Stopped:
			r.role.SetText("Assistant · stopped by you" + supersededTag(it))
		case it.Closed:
			r.role.SetText("Assistant · cut short when Tally closed" + supersededTag(it))
		default:
			r.role.SetText("Assistant" + supersededTag(it))
		}
	case itemRewind:
		r.Fold.SetText(foldToggleText(it))
	case ItemTool:
		r.card.set(it)
	}
	if hasReason {
		arrow := "▸"
		if it.ReasonOn {
			arrow = "▾"
			r.rtext.SetText(tw.ClipForDisplay(it.Reasoning))
		}
		name := "Reasoning"
		if it.DetailName != "" {
			name = it.DetailName
		}
		r.Reason.SetText(arrow + " " + name + " (" + text.Thousands(len([]rune(it.Reasoning))) + " chars)")
	}
	if it.Kind == ItemCycle {
		r.Fold.SetText(foldToggleText(it)) // under the heading it belongs to
	}
	if plain {
		style := fyne.TextStyle{}
		imp := widget.MediumImportance
		if it.Kind == ItemRebuild || it.Kind == ItemCycle || it.Kind == itemRewind {
			style.Bold = true
			imp = widget.HighImportance
		}
		if it.Kind == ItemNotice {
			style.Italic = true
			imp = widget.LowImportance
			if it.isError {
				imp = widget.DangerImportance
			}
		}
		r.Plain.TextStyle, r.Plain.Importance = style, imp
		r.Plain.SetText(it.Text)
	}
	if rich {
		r.rich.SetDoc(doc)
	}
	r.showImages(it)
}

// restyle takes the row's colours and corners from the theme in use, and
// redraws what changed: a row keeps them from one Set to the next, and a
// row made under the dark theme must not stay dark after a switch to the
// light one (its text would then be dark on a dark block).
func (r *MessageRow) restyle() {
	radius := theme.Size(theme.SizeNameInputRadius)
	paint(r.bg, theme.Color(theme.ColorNameInputBackground), radius)
	paint(r.Hover, theme.Color(theme.ColorNameHover), radius)
	paint(r.veil, veilColor(), 0)
}

// paint gives rect its fill and corner radius, redrawing it if they
// changed.
func paint(rect *canvas.Rectangle, fill color.Color, radius float32) {
	if rect.FillColor != nil && sameColor(rect.FillColor, fill) && rect.CornerRadius == radius {
		return
	}
	rect.FillColor, rect.CornerRadius = fill, radius
	rect.Refresh()
}

// sameColor reports whether a and b are the same colour.
func sameColor(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// showImages puts the thumbnails of it's pictures under its text.
func (r *MessageRow) showImages(it *Item) {
	tw.ShowIf(r.Pics, len(it.Images) > 0)
	objs := make([]fyne.CanvasObject, 0, len(it.Images))
	for _, ref := range it.Images {
		objs = append(objs, r.chat.thumb(ref, it))
	}
	r.Pics.Objects = objs
	r.Pics.Refresh()
}

// CreateRenderer implements fyne.Widget.
func (r *MessageRow) CreateRenderer() fyne.WidgetRenderer {
	r.body = container.NewVBox(r.header, r.Reason, r.rtext, r.Plain, r.Pics, r.Fold, r.rich, r.card)
	return rowRenderer{WidgetRenderer: widget.NewSimpleRenderer(container.NewStack(r.bg, r.Hover, container.NewPadded(r.body), r.veil)), r: r}
}

// rowRenderer draws a row; a refresh (Fyne refreshes every widget when
// the theme changes) takes its colours from the theme again.
type rowRenderer struct {
	fyne.WidgetRenderer
	r *MessageRow
}

// Refresh implements fyne.WidgetRenderer.
func (rr rowRenderer) Refresh() {
	rr.r.restyle()
	rr.WidgetRenderer.Refresh()
}

// Tapped implements fyne.Tappable. A click on a row gives the chat the
// keyboard and never scrolls it (with Fyne's List a click selected the
// row and scrolled to it: the chat jumped when a card's title was
// clicked).
func (r *MessageRow) Tapped(*fyne.PointEvent) {
	if r.chat.List != nil {
		r.chat.List.takeFocus()
	}
}
