package extensions

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// profileForm is a form with a field of every kind.
func profileForm(t *testing.T, extra int) mcp.Form {
	t.Helper()
	return mcp.Form{Server: "crm", Message: "Who are you?", Fields: profileFields(extra)}
}

func profileFields(extra int) []mcp.Field {
	lo, hi := 0.0, 150.0
	fs := []mcp.Field{
		{Name: "age", Kind: mcp.KindInteger, Min: &lo, Max: &hi, Default: int64(30)},
		{Name: "email", Kind: mcp.KindString, Title: "Email", Format: "email", Required: true, Description: "Where the receipt goes."},
		{Name: "name", Kind: mcp.KindString, Title: "Name", Default: "John Doe"},
		{Name: "plan", Kind: mcp.KindChoice, Choices: []mcp.Choice{{Value: "free", Title: "Free"}, {Value: "pro", Title: "Pro"}}, Default: "free"},
		{Name: "tags", Kind: mcp.KindChoices, Choices: []mcp.Choice{{Value: "a"}, {Value: "b"}}, Default: []string{"b"}},
		{Name: "verified", Kind: mcp.KindBoolean, Title: "Verified", Default: true},
	}
	for i := range extra {
		fs = append(fs, mcp.Field{Name: fmt.Sprintf("note%02d", i), Kind: mcp.KindString, Description: "One more line of a long form."})
	}
	return fs
}

// openForm shows f in a fresh window of the given size and returns the
// dialog and a pointer to the reply it gave (nil until it answers).
func openForm(t *testing.T, f mcp.Form, w, h float32) (*FormDialog, fyne.Window, **mcp.Reply) {
	t.Helper()
	test.NewTempApp(t)
	win := fynetest.Window(t, widget.NewLabel(""), w, h)
	var got *mcp.Reply
	d := NewFormDialog(f, win, func(r mcp.Reply) { got = &r })
	return d, win, &got
}

func TestFormDialogFillsInDefaultsAndChecksAnswers(t *testing.T) {
	d, _, got := openForm(t, profileForm(t, 0), 960, 600)
	in := map[string]*formInput{}
	for _, i := range d.inputs {
		in[i.field.Name] = i
	}
	if in["name"].entry.Text != "John Doe" || in["age"].entry.Text != "30" || !in["verified"].check.Checked ||
		in["plan"].pick.Selected != "Free" || len(in["tags"].group.Selected) != 1 || in["tags"].group.Selected[0] != "b" {
		t.Fatal("the defaults are not filled in")
	}
	test.Type(in["age"].entry, "x")
	test.Tap(d.accept)
	if *got != nil || !in["age"].wrong.Visible() || !strings.Contains(in["age"].wrong.Text, "must be a whole number") ||
		!in["email"].wrong.Visible() || !strings.Contains(in["email"].wrong.Text, "is required") || !d.problem.Visible() {
		t.Fatalf("wrong answers were accepted or not explained: %q, %q", in["age"].wrong.Text, in["email"].wrong.Text)
	}
	in["age"].entry.SetText("42")
	test.Type(in["email"].entry, "ada@example.com")
	in["plan"].pick.SetSelected("Pro")
	test.Tap(in["verified"].check)
	in["email"].entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if *got == nil {
		t.Fatal("Enter did not accept the form")
	}
	b, _ := json.Marshal((*got).Content)
	if (*got).Action != mcp.ActionAccept || string(b) != `{"age":42,"email":"ada@example.com","name":"John Doe","plan":"pro","tags":["b"],"verified":false}` {
		t.Errorf("the reply is %s %s", (*got).Action, b)
	}
}

func TestFormDialogDeclinesAndCancels(t *testing.T) {
	_, win, got := openForm(t, profileForm(t, 0), 960, 600)
	test.Tap(fynetest.Button(win.Canvas().Overlays().Top(), "Decline"))
	if *got == nil || (*got).Action != mcp.ActionDecline {
		t.Fatalf("Decline gave %+v", *got)
	}
	_, win, got = openForm(t, profileForm(t, 0), 960, 600)
	if !tw.DismissTop(win.Canvas()) || *got == nil || (*got).Action != mcp.ActionCancel {
		t.Fatalf("Escape gave %+v", *got)
	}
}

// A long form fits a 960×600 window and scrolls to its last field.
func TestFormDialogFitsASmallWindow(t *testing.T) {
	d, win, _ := openForm(t, profileForm(t, 20), 960, 600)
	fynetest.LayoutAll(win.Canvas().Overlays().Top())
	at, size := fyne.CurrentApp().Driver().AbsolutePositionForObject(d.accept), d.accept.Size()
	if !d.accept.Visible() || size.IsZero() || at.X+size.Width > 960 || at.Y+size.Height > 600 {
		t.Fatalf("the Accept button is drawn at %v (%v), outside the 960×600 window", at, size)
	}
	var scroll *container.Scroll
	fynetest.Walk(win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if s, ok := o.(*container.Scroll); ok && scroll == nil {
			scroll = s
		}
		return scroll == nil
	})
	if scroll == nil || scroll.Content.MinSize().Height <= scroll.Size().Height {
		t.Fatal("the long form does not scroll")
	}
	last := d.inputs[len(d.inputs)-1].entry
	scroll.ScrollToBottom()
	if bottom := last.Position().Y + last.Size().Height; scroll.Offset.Y+scroll.Size().Height < bottom {
		t.Errorf("scrolled to the bottom, the view ends at %v, above the last field's end at %v", scroll.Offset.Y+scroll.Size().Height, bottom)
	}
}
