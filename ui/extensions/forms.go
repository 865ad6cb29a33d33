package extensions

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// A form an MCP server asks for during a tool call opens as a dialog: one
// widget per field with its default filled in, a star on the required
// ones, and Accept, Decline and Cancel. A page it asks to be opened
// (URL mode) opens as a dialog of its own (page.go).

// FormDialog is the dialog of one form.
type FormDialog struct {
	form    mcp.Form
	inputs  []*formInput
	problem *widget.Label
	accept  *widget.Button
	dlg     *dialog.CustomDialog
	answer  func(mcp.Reply)
	done    bool
}

// formInput is the widget of one field and the line saying what is wrong
// with its answer.
type formInput struct {
	field mcp.Field
	entry *tw.EscEntry       // text, number, whole number
	check *widget.Check      // yes or no
	pick  *widget.Select     // one choice
	group *widget.CheckGroup // several choices
	value map[string]string  // a choice's label → its value
	wrong *widget.Label
}

// NewFormDialog shows f in win; answer gets the reply once (Accept with
// the answers, Decline, or Cancel, also on Escape).
func NewFormDialog(f mcp.Form, win fyne.Window, answer func(mcp.Reply)) *FormDialog {
	d := &FormDialog{form: f, answer: answer}
	if f.Page() {
		return d.page(win)
	}
	body := container.NewVBox(heading(f, "to fill in this form")...)
	required := false
	for _, fd := range f.Fields {
		in := newFormInput(fd, d.submit)
		d.inputs = append(d.inputs, in)
		label := fd.Label()
		if fd.Required {
			label += " *"
			required = true
		}
		body.Add(widget.NewSeparator())
		body.Add(&widget.Label{Text: label, TextStyle: fyne.TextStyle{Bold: true}, Wrapping: fyne.TextWrapWord})
		if fd.Description != "" && fd.Description != fd.Title {
			body.Add(&widget.Label{Text: fd.Description, Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance})
		}
		body.Add(in.widget())
		body.Add(in.wrong)
	}
	if required {
		body.Add(&widget.Label{Text: "* required", Importance: widget.LowImportance})
	}
	d.show(win, "Form from ", body, &widget.Button{Text: "Accept", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance, OnTapped: d.submit})
	for _, in := range d.inputs {
		if in.entry != nil {
			win.Canvas().Focus(in.entry)
			break
		}
	}
	return d
}

// heading is the first lines of a form's or a page's dialog: which server
// asks the user for what (asks: "to fill in this form"), then its
// message.
func heading(f mcp.Form, asks string) []fyne.CanvasObject {
	return []fyne.CanvasObject{
		&widget.Label{Text: fmt.Sprintf("The MCP server %q asks you %s during a tool call:", text.Clip(f.Server, 60), asks), Wrapping: fyne.TextWrapWord},
		&widget.Label{Text: f.Message, Wrapping: fyne.TextWrapWord, TextStyle: fyne.TextStyle{Bold: true}},
	}
}

// show frames body as d's dialog, titled title and the server's name,
// with a problem line under it and Cancel, Decline and accept as its
// buttons (closing it cancels), sized to body within win, and shows it.
func (d *FormDialog) show(win fyne.Window, title string, body *fyne.Container, accept *widget.Button) {
	d.problem = &widget.Label{Importance: widget.DangerImportance, Wrapping: fyne.TextWrapWord}
	d.problem.Hide()
	d.accept = accept
	decline := &widget.Button{Text: "Decline", Icon: theme.CancelIcon(), OnTapped: func() { d.finish(mcp.Declined) }}
	cancel := &widget.Button{Text: "Cancel", OnTapped: func() { d.finish(mcp.Cancelled) }}
	d.dlg = dialog.NewCustomWithoutButtons(title+text.Clip(d.form.Server, 60), container.NewBorder(nil, d.problem, nil, nil, container.NewVScroll(body)), win)
	d.dlg.SetButtons([]fyne.CanvasObject{cancel, decline, d.accept})
	d.dlg.SetOnClosed(func() { d.finish(mcp.Cancelled) })
	size := win.Canvas().Size()
	d.dlg.Resize(fyne.NewSize(min(600, size.Width-40), min(body.MinSize().Height+160, size.Height-60)))
	d.dlg.Show()
}

// newFormInput makes the widget of fd with its default filled in; Enter
// in a text field calls submit.
func newFormInput(fd mcp.Field, submit func()) *formInput {
	in := &formInput{field: fd, wrong: &widget.Label{Importance: widget.DangerImportance, Wrapping: fyne.TextWrapWord}}
	in.wrong.Hide()
	switch fd.Kind {
	case mcp.KindBoolean:
		in.check = widget.NewCheck("Yes", nil)
		in.check.Checked = fd.Default == true
	case mcp.KindChoice, mcp.KindChoices:
		in.value = map[string]string{}
		var labels []string
		byValue := map[string]string{}
		for _, c := range fd.Choices {
			l := c.Label()
			if _, taken := in.value[l]; taken {
				l += " (" + c.Value + ")"
			}
			in.value[l] = c.Value
			byValue[c.Value] = l
			labels = append(labels, l)
		}
		if fd.Kind == mcp.KindChoice {
			in.pick = widget.NewSelect(labels, nil)
			in.pick.PlaceHolder = "(choose one)"
			if v, ok := fd.Default.(string); ok {
				in.pick.Selected = byValue[v]
			}
			break
		}
		in.group = widget.NewCheckGroup(labels, nil)
		if vs, ok := fd.Default.([]string); ok {
			for _, v := range vs {
				in.group.Selected = append(in.group.Selected, byValue[v])
			}
		}
	default:
		in.entry = tw.NewEscEntry()
		in.entry.SetText(fd.Text(fd.Default))
		in.entry.SetPlaceHolder(placeholder(fd))
		in.entry.OnSubmitted = func(string) { submit() }
		in.entry.OnChanged = func(string) { in.wrong.SetText("") } // kept shown: the fields under it stay put
	}
	return in
}

// placeholder says what an empty text field takes.
func placeholder(fd mcp.Field) string {
	switch {
	case fd.Kind == mcp.KindInteger && fd.Min != nil && fd.Max != nil:
		return fmt.Sprintf("a whole number from %s to %s", fd.Text(*fd.Min), fd.Text(*fd.Max))
	case fd.Kind == mcp.KindInteger:
		return "a whole number"
	case fd.Kind == mcp.KindNumber && fd.Min != nil && fd.Max != nil:
		return fmt.Sprintf("a number from %s to %s", fd.Text(*fd.Min), fd.Text(*fd.Max))
	case fd.Kind == mcp.KindNumber:
		return "a number"
	case fd.Format == "email":
		return "name@example.com"
	case fd.Format == "uri":
		return "https://…"
	case fd.Format == "date":
		return "YYYY-MM-DD"
	case fd.Format == "date-time":
		return "YYYY-MM-DDThh:mm:ssZ"
	}
	return ""
}

func (in *formInput) widget() fyne.CanvasObject {
	switch {
	case in.check != nil:
		return in.check
	case in.pick != nil:
		return in.pick
	case in.group != nil:
		return in.group
	}
	return in.entry
}

// answer is the field's answer: nil when left out (an empty text field,
// no choice made), or the reason it does not fit.
func (in *formInput) answer() (any, error) {
	switch {
	case in.check != nil:
		return in.check.Checked, nil
	case in.pick != nil:
		if in.pick.Selected == "" {
			return nil, nil
		}
		return in.value[in.pick.Selected], nil
	case in.group != nil:
		picked := []string{}
		for _, l := range in.group.Selected {
			picked = append(picked, in.value[l])
		}
		return in.field.Normalize(picked)
	}
	return in.field.Parse(in.entry.Text)
}

// submit checks every answer, says under each field what is wrong, and
// accepts the form when nothing is.
func (d *FormDialog) submit() {
	content := map[string]any{}
	bad := 0
	for _, in := range d.inputs {
		v, err := in.answer()
		if err == nil && v == nil && in.field.Required && in.field.Default == nil {
			err = fmt.Errorf("%q is required; give it a value", in.field.Label())
		}
		if err != nil {
			in.wrong.SetText(tw.Sentence(err.Error()))
			in.wrong.Show()
			bad++
			continue
		}
		in.wrong.SetText("") // kept shown if it was: the fields under it stay put
		if v != nil {
			content[in.field.Name] = v
		}
	}
	if bad > 0 {
		msg := "One answer does not fit; see the red line above."
		if bad > 1 {
			msg = fmt.Sprintf("%d answers do not fit; see the red lines above.", bad)
		}
		d.problem.SetText(msg)
		d.problem.Show()
		return
	}
	r, err := d.form.Accept(content)
	if err != nil {
		d.problem.SetText(tw.Sentence(err.Error()))
		d.problem.Show()
		return
	}
	d.finish(r)
}

// finish answers the form once and closes the dialog.
func (d *FormDialog) finish(r mcp.Reply) {
	if d.done {
		return
	}
	d.done = true
	d.dlg.Hide()
	d.answer(r)
}

// Close closes the dialog without answering (the form was withdrawn).
func (d *FormDialog) Close() {
	d.done = true
	d.dlg.Hide()
}
