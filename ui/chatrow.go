package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// messageRow draws any chat item; one row type keeps the list's recycling
// simple and lets the same widget measure rows off screen.
type messageRow struct {
	widget.BaseWidget

	chat    *chatView
	item    *chatItem
	bg      *canvas.Rectangle
	hover   *canvas.Rectangle // shown while the pointer is over the row
	role    *widget.Label
	copyB   *widget.Button
	rewindB *widget.Button // "Rewind to here…" on the user's messages
	header  *fyne.Container
	reason  *widget.Button
	fold    *widget.Button // expands a rewind's folded messages
	veil    *canvas.Rectangle
	rtext   *widget.Label
	plain   *widget.Label
	rich    *tw.Markdown
	card    *toolCard
	pics    *fyne.Container // the message's thumbnails
}

func newMessageRow(c *chatView) *messageRow {
	r := &messageRow{chat: c}
	r.bg = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	r.bg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	r.hover = canvas.NewRectangle(theme.Color(theme.ColorNameHover))
	r.hover.CornerRadius = r.bg.CornerRadius
	r.hover.Hide()
	r.role = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
	r.copyB = &widget.Button{Icon: theme.ContentCopyIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if r.item != nil && r.chat.copy != nil {
			r.chat.copy(r.item.copyText())
		}
	}}
	r.rewindB = &widget.Button{Text: "Rewind to here…", Icon: theme.HistoryIcon(), Importance: widget.LowImportance, OnTapped: func() {
		if r.item != nil && r.chat.onRewind != nil {
			r.chat.onRewind(r.item)
		}
	}}
	r.header = container.NewBorder(nil, nil, nil, container.NewHBox(r.rewindB, r.copyB), r.role)
	r.reason = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading, OnTapped: func() {
		switch {
		case r.item == nil:
		case r.item.kind == itemCycle:
			r.chat.toggleFold(r.item)
		default:
			r.chat.toggleReasoning(r.item)
		}
	}}
	r.fold = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading, OnTapped: func() {
		if r.item != nil {
			r.chat.toggleFold(r.item)
		}
	}}
	r.veil = canvas.NewRectangle(veilColor())
	// Italic tells reasoning apart; the low-importance colour (the theme's
	// disabled colour) would be unreadable on the light theme.
	r.rtext = &widget.Label{TextStyle: fyne.TextStyle{Italic: true}, Wrapping: fyne.TextWrapWord}
	r.plain = &widget.Label{Wrapping: fyne.TextWrapWord, Selectable: true}
	r.rich = tw.NewMarkdown(nil)
	r.pics = container.New(&flowLayout{})
	r.card = newToolCard(func(it *chatItem, d tool.Decision) {
		if r.chat.onDecide != nil {
			r.chat.onDecide(it, d)
		}
	}, func(it *chatItem) { r.chat.toggleResult(it) }, [2]func(*chatItem){
		func(it *chatItem) { r.chat.onChild[0](it) }, func(it *chatItem) { r.chat.onChild[1](it) }})
	r.card.onDiags = func(it *chatItem) { r.chat.toggleDiagnostics(it) }
	r.card.onCommand = func(it *chatItem) {
		if r.chat.onCommand != nil {
			r.chat.onCommand(it)
		}
	}
	r.ExtendBaseWidget(r)
	return r
}

// set shows it in the row.
func (r *messageRow) set(it *chatItem) {
	r.item = it
	tw.ShowIf(r.bg, it.kind == itemUser)
	tw.ShowIf(r.header, it.kind == itemUser || it.kind == itemAssistant)
	tw.ShowIf(r.card, it.kind == itemTool)
	hasReason := (it.kind == itemAssistant || it.kind == itemRebuild || it.kind == itemNotice) && it.reasoning != ""
	tw.ShowIf(r.reason, hasReason)
	tw.ShowIf(r.rtext, hasReason && it.reasonOn)
	plain := it.kind == itemUser || it.kind == itemNotice || it.kind == itemRebuild || it.kind == itemCycle || it.kind == itemRewind || (it.kind == itemAssistant && it.streaming && it.text != "")
	var doc *tw.Doc
	if it.kind == itemAssistant && !it.streaming {
		doc = r.chat.doc(it)
	}
	rich := doc != nil
	tw.ShowIf(r.plain, plain)
	tw.ShowIf(r.rich, rich)
	tw.ShowIf(r.rewindB, it.kind == itemUser && (it.logIndex >= 0 || !it.sent.IsZero()) && r.chat.onRewind != nil)
	tw.ShowIf(r.fold, it.kind == itemRewind && len(it.pastItems) > 0 || it.kind == itemCycle)
	tw.ShowIf(r.veil, it.superseded)
	if it.superseded {
		r.veil.FillColor = veilColor()
		r.veil.Refresh()
	}
	switch it.kind {
	case itemUser:
		r.role.SetText("You" + supersededTag(it))
	case itemAssistant:
		switch {
		case it.streaming:
			r.role.SetText("Assistant · writing…")
		case it.unsaved:
			r.role.SetText("Assistant · stopped by you · not kept in the conversation")
		case it.stopped:
			r.role.SetText("Assistant · stopped by you" + supersededTag(it))
		default:
			r.role.SetText("Assistant" + supersededTag(it))
		}
	case itemRewind:
		r.fold.SetText(foldToggleText(it))
	case itemTool:
		r.card.set(it)
	}
	if hasReason {
		arrow := "▸"
		if it.reasonOn {
			arrow = "▾"
			r.rtext.SetText(tw.ClipForDisplay(it.reasoning))
		}
		name := "Reasoning"
		if it.detailName != "" {
			name = it.detailName
		}
		r.reason.SetText(arrow + " " + name + " (" + text.Thousands(len([]rune(it.reasoning))) + " chars)")
	}
	if it.kind == itemCycle {
		r.fold.SetText(foldToggleText(it)) // under the heading it belongs to
	}
	if plain {
		style := fyne.TextStyle{}
		imp := widget.MediumImportance
		if it.kind == itemRebuild || it.kind == itemCycle || it.kind == itemRewind {
			style.Bold = true
			imp = widget.HighImportance
		}
		if it.kind == itemNotice {
			style.Italic = true
			imp = widget.LowImportance
			if it.isError {
				imp = widget.DangerImportance
			}
		}
		r.plain.TextStyle, r.plain.Importance = style, imp
		r.plain.SetText(it.text)
	}
	if rich {
		r.rich.SetDoc(doc)
	}
	r.showImages(it)
}

// showImages puts the thumbnails of it's pictures under its text.
func (r *messageRow) showImages(it *chatItem) {
	tw.ShowIf(r.pics, len(it.images) > 0)
	objs := make([]fyne.CanvasObject, 0, len(it.images))
	for _, ref := range it.images {
		objs = append(objs, r.chat.thumb(ref, it))
	}
	r.pics.Objects = objs
	r.pics.Refresh()
}

// CreateRenderer implements fyne.Widget.
func (r *messageRow) CreateRenderer() fyne.WidgetRenderer {
	body := container.NewVBox(r.header, r.reason, r.rtext, r.plain, r.pics, r.fold, r.rich, r.card)
	return widget.NewSimpleRenderer(container.NewStack(r.bg, r.hover, container.NewPadded(body), r.veil))
}

// Tapped implements fyne.Tappable. A click on a row gives the chat the
// keyboard and never scrolls it (with Fyne's List a click selected the
// row and scrolled to it: the chat jumped when a card's title was
// clicked).
func (r *messageRow) Tapped(*fyne.PointEvent) {
	if r.chat.list != nil {
		r.chat.list.takeFocus()
	}
}
