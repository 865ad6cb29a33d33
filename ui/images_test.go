package ui

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// writePNG writes a w×h PNG to dir/name and returns its path and bytes.
func writePNG(t *testing.T, dir, name string, w, h int) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b.Bytes()
}

// chips returns the texts of the prompt's image chips.
func chips(h *harness) []string {
	var out []string
	for _, p := range h.ui.input.images.items {
		out = append(out, chipText(p))
	}
	return out
}

// Dropping an image file onto the window, pasting its path or choosing it
// with "Attach image…" puts a chip over the prompt with its name, size and
// estimated tokens; × takes it off; Send sends the picture with the text,
// and the chat shows its thumbnail.
func TestAttachImageByDropPasteAndButton(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("A black square.")))
	t.Cleanup(srv.Close)
	env := endpoint(srv)
	env["TALLY_MODEL"] = "gpt-4o"
	h := newHarness(t, env)
	h.newSession()
	shot, data := writePNG(t, t.TempDir(), "shot.png", 1024, 1024)

	h.ui.input.images.dropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(shot)})
	h.waitFor("the dropped image's chip", func() bool { return len(h.ui.input.images.items) == 1 })
	c := chips(h)[0]
	for _, want := range []string{"shot.png", "1024×1024", "~765 tokens"} {
		if !strings.Contains(c, want) {
			t.Errorf("chip %q does not say %q", c, want)
		}
	}
	if !h.shows(c) || !h.ui.input.images.box.Visible() {
		t.Error("the chip is not shown over the prompt")
	}

	// × takes it off.
	var removed bool
	fynetest.Walk(h.ui.input.images.box, func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok && !removed {
			test.Tap(b)
			removed = true
		}
		return !removed
	})
	if !removed || len(h.ui.input.images.items) != 0 || h.ui.input.images.box.Visible() {
		t.Fatalf("× did not take the image off: %v", chips(h))
	}

	// A pasted path is an attachment, not text.
	h.ui.app.Clipboard().SetContent(shot)
	h.ui.input.prompt.TypedShortcut(&fyne.ShortcutPaste{Clipboard: h.ui.app.Clipboard()})
	h.waitFor("the pasted image's chip", func() bool { return len(h.ui.input.images.items) == 1 })
	if h.ui.input.prompt.Text != "" {
		t.Errorf("the path was pasted as text too: %q", h.ui.input.prompt.Text)
	}
	// Other text pastes as text.
	h.ui.app.Clipboard().SetContent("plain words")
	h.ui.input.prompt.TypedShortcut(&fyne.ShortcutPaste{Clipboard: h.ui.app.Clipboard()})
	if h.ui.input.prompt.Text != "plain words" {
		t.Errorf("text did not paste: %q", h.ui.input.prompt.Text)
	}
	h.ui.input.prompt.SetText("")

	// The button opens the file dialog.
	test.Tap(h.ui.input.images.button)
	if len(h.win.Canvas().Overlays().List()) == 0 {
		t.Error("Attach image… opened no file dialog")
	}
	for _, o := range h.win.Canvas().Overlays().List() {
		h.win.Canvas().Overlays().Remove(o)
	}

	// A file that is not an image is refused, in the banner.
	notes := filepath.Join(t.TempDir(), "notes.png")
	os.WriteFile(notes, []byte("not a picture"), 0o644)
	h.ui.input.images.attachPaths([]string{notes})
	h.waitFor("the refusal", func() bool {
		return strings.Contains(h.ui.banner.Text(), "notes.png is not a PNG, JPEG, GIF or WebP image")
	})
	if len(h.ui.input.images.items) != 1 {
		t.Errorf("the refused file was attached: %v", chips(h))
	}

	h.send("What is this?")
	if len(h.ui.input.images.items) != 0 {
		t.Error("the chips stayed after Send")
	}
	h.waitIdle()
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages[1].Images) != 1 || !bytes.Equal(reqs[0].Messages[1].Images[0].Data, data) {
		t.Fatalf("the request does not carry the picture's exact bytes")
	}
	// The chat shows the thumbnail under the user's text.
	var user *chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemUser {
			user = it
		}
	}
	if user == nil || len(user.Images) != 1 || user.Images[0].Name != "shot.png" {
		t.Fatalf("the user's row carries no picture: %+v", user)
	}
	h.waitFor("the thumbnail", func() bool { return h.ui.chat.Thumbs.Done[user.Images[0].SHA256] != nil })
	row := chat.NewMessageRow(h.ui.chat)
	row.Set(user)
	test.NewWindow(row).Resize(fyne.NewSize(600, 400))
	var pics int
	var caption bool
	fynetest.Walk(row.Pics, func(o fyne.CanvasObject) bool {
		switch v := o.(type) {
		case *canvas.Image:
			pics++
		case *widget.Label:
			caption = caption || v.Text == "shot.png · 1024×1024"
		}
		return true
	})
	if pics != 1 || !caption {
		t.Errorf("the row shows %d thumbnails (caption %v); want 1 with its caption", pics, caption)
	}
}

// A model that does not accept images refuses the attachment, naming the
// setting; the Settings checkbox turns it on for that model.
func TestAttachImageWithoutVision(t *testing.T) {
	srv := llmtest.New(nil)
	t.Cleanup(srv.Close)
	env := endpoint(srv)
	env["TALLY_MODEL"] = "deepseek-chat"
	h := newHarness(t, env)
	h.newSession()
	shot, _ := writePNG(t, t.TempDir(), "shot.png", 16, 16)
	h.ui.input.images.attachPaths([]string{shot})
	if b := h.ui.banner.Text(); !strings.Contains(b, "deepseek-chat does not accept images") || !strings.Contains(b, "The model accepts images") {
		t.Errorf("banner = %q", b)
	}
	if len(h.ui.input.images.items) != 0 {
		t.Error("the image was attached")
	}

	d := openSettingsDialog(h)
	vision := d.check("Images")
	if vision.Checked {
		t.Fatal("the checkbox is on for deepseek-chat")
	}
	d.entry("Model").SetText("gpt-4o")
	if !vision.Checked {
		t.Error("the checkbox does not follow the model: gpt-4o accepts images")
	}
	d.entry("Model").SetText("deepseek-chat")
	vision.SetChecked(true)
	if !d.save() {
		t.Fatal("Settings did not save")
	}
	h.waitFor("the saved choice and the reopened session", func() bool {
		return h.ui.wb.Settings().VisionFor("deepseek-chat") && h.ui.live != nil && h.ui.live.sess != nil && h.ui.live.sess.Snapshot().Vision
	})
	h.ui.input.images.attachPaths([]string{shot})
	h.waitFor("the chip", func() bool { return len(h.ui.input.images.items) == 1 })
}

// A thumbnail fits its box; bytes that are not a picture are an error,
// never a panic.
func TestThumbnail(t *testing.T) {
	_, data := writePNG(t, t.TempDir(), "wide.png", 3000, 500)
	img, err := chat.Thumbnail(data)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 2*chat.ThumbW || b.Dy() > 2*chat.ThumbH {
		t.Errorf("thumbnail is %v; want it to fit %d×%d", b, 2*chat.ThumbW, 2*chat.ThumbH)
	}
	for _, bad := range [][]byte{nil, []byte("text"), data[:40], append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)} {
		if _, err := chat.Thumbnail(bad); err == nil {
			t.Errorf("thumbnail of %d bad bytes: no error", len(bad))
		}
	}
}

// A clipboard naming image files, one a line, as paths or file:// URIs,
// is pictures; anything else is text.
func TestImagePaths(t *testing.T) {
	dir := t.TempDir()
	a, _ := writePNG(t, dir, "a.png", 2, 2)
	b, _ := writePNG(t, dir, "b b.png", 2, 2)
	uri := storage.NewFileURI(b).String()
	if got := imagePaths(a + "\r\n" + uri + "\n"); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("imagePaths = %q", got)
	}
	for _, clip := range []string{"", "a.png", a + "\nsome words", filepath.Join(dir, "gone.png"), dir} {
		if got := imagePaths(clip); got != nil {
			t.Errorf("imagePaths(%q) = %q; want text", clip, got)
		}
	}
}
