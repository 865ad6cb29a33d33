package ui

import (
	"errors"
	"fmt"
	"image"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Pictures attached to the prompt. Fyne's clipboard holds only text, so
// an image reaches the prompt three ways: dropped onto the window as a
// file, chosen with "Attach image…", or pasted as the path (or file://
// URI) of an image file, which is what a file manager's Copy puts on the
// clipboard. Each attached image shows as a chip over the prompt with its
// name, size and estimated tokens, and a × that takes it off; Send sends
// them with the text, and the chat shows them as thumbnails.

// pendingImage is a picture attached to the prompt, not sent yet.
type pendingImage struct {
	id   int // tells two attachments of the same file apart
	name string
	data []byte
	info images.Info
}

// imageTray holds the prompt's attached pictures and shows their chips.
type imageTray struct {
	u      *UI
	items  []pendingImage
	nextID int
	box    *fyne.Container // the chips, wrapping onto more rows
	button *widget.Button  // "Attach image…"
}

func newImageTray(u *UI) *imageTray {
	t := &imageTray{u: u, box: container.New(&tw.FlowLayout{})}
	// Icon only, beside "Ctrl+Enter sends": the prompt area keeps its height.
	t.button = &widget.Button{Icon: theme.FileImageIcon(), Importance: widget.LowImportance, OnTapped: t.choose}
	t.box.Hide()
	return t
}

// inputs are the attached pictures as the engine takes them.
func (t *imageTray) inputs() []images.Input {
	out := make([]images.Input, len(t.items))
	for i, p := range t.items {
		out[i] = images.Input{Name: p.name, Data: p.data}
	}
	return out
}

// set replaces the attached pictures and redraws the chips.
func (t *imageTray) set(items []pendingImage) {
	t.items = items
	objs := make([]fyne.CanvasObject, 0, len(items))
	for i := range items {
		objs = append(objs, t.chip(i))
	}
	t.box.Objects = objs
	tw.ShowIf(t.box, len(items) > 0)
	t.box.Refresh()
}

// clear takes every picture off the prompt.
func (t *imageTray) clear() { t.set(nil) }

// chipText is what the chip of p says: name, size and estimated tokens.
func chipText(p pendingImage) string {
	return fmt.Sprintf("%s · %s · %d×%d · ~%s tokens", text.OneLine(p.name, 40), images.SizeText(p.info.Size), p.info.Width, p.info.Height, text.Thousands(p.info.Tokens()))
}

// chip is the chip of picture i, with its remove button.
func (t *imageTray) chip(i int) fyne.CanvasObject {
	p := t.items[i]
	label := &widget.Label{Text: chipText(p)}
	remove := &widget.Button{Icon: theme.CancelIcon(), Importance: widget.LowImportance, OnTapped: func() { t.remove(p) }}
	bg := tw.NewThemedRect(theme.ColorNameInputBackground)
	bg.Rounded = true
	icon := widget.NewIcon(theme.FileImageIcon())
	return container.NewStack(bg, container.NewHBox(icon, label, remove))
}

// remove takes p off the prompt.
func (t *imageTray) remove(p pendingImage) {
	for i := range t.items {
		if t.items[i].id == p.id {
			t.set(append(t.items[:i:i], t.items[i+1:]...))
			return
		}
	}
}

// add attaches pictures read from files or the clipboard, after checking
// them; what cannot be attached is said in the banner, and the rest is
// attached.
func (t *imageTray) add(read []pendingImage, problems []string) {
	items := append([]pendingImage(nil), t.items...)
	for _, p := range read {
		if len(items) >= images.MaxPerMessage {
			problems = append(problems, fmt.Sprintf("%s was not attached: one message carries at most %d images", p.name, images.MaxPerMessage))
			continue
		}
		t.nextID++
		p.id = t.nextID
		items = append(items, p)
	}
	t.set(items)
	if len(problems) > 0 {
		t.u.banner.ShowError(strings.Join(problems, "; ") + ".") // a file's name keeps its case
	}
}

// canAttach reports whether the shown session takes pictures, and says
// in the banner why not when it does not.
func (t *imageTray) canAttach() bool {
	live := t.u.live
	switch {
	case live == nil || live.sess == nil:
		t.u.banner.ShowError("Open a session first, then attach the image.")
		return false
	case !live.sess.Snapshot().Vision:
		msg := fmt.Sprintf("The model %s does not accept images, so the image was not attached; turn on %s if it does.", live.sess.Snapshot().Meta.Model, images.VisionSetting)
		t.u.banner.ShowAction(msg, "Settings", t.u.showSettings)
		return false
	}
	return true
}

// attachPaths reads the image files at paths off the UI goroutine and
// attaches them.
func (t *imageTray) attachPaths(paths []string) {
	if len(paths) == 0 || !t.canAttach() {
		return
	}
	t.u.bridge.Work(func() func() {
		read, problems := readImageFiles(paths)
		return func() { t.add(read, problems) }
	})
}

// dropped attaches the files dropped onto the window.
func (t *imageTray) dropped(_ fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		if u != nil && u.Scheme() == "file" && u.Path() != "" {
			paths = append(paths, u.Path())
		}
	}
	t.attachPaths(paths)
}

// choose opens the file dialog for attaching an image.
func (t *imageTray) choose() {
	if !t.canAttach() {
		return
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			t.u.banner.ShowError("Could not open the image: " + err.Error())
			return
		}
		if r == nil {
			return // cancelled
		}
		name := r.URI().Name()
		t.u.bridge.Work(func() func() {
			defer r.Close()
			p, err := readImage(name, r)
			return func() {
				if err != nil {
					t.add(nil, []string{err.Error()})
					return
				}
				t.add([]pendingImage{p}, nil)
			}
		})
	}, t.u.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".png", ".jpg", ".jpeg", ".gif", ".webp", ".PNG", ".JPG", ".JPEG", ".GIF", ".WEBP"}))
	if ws := t.u.live.info.workspace; ws != "" {
		if l, err := storage.ListerForURI(storage.NewFileURI(ws)); err == nil {
			d.SetLocation(l)
		}
	}
	d.Show()
}

// pasted attaches the image files the clipboard names and reports whether
// it did: a clipboard holding only paths or file:// URIs of existing image
// files (one a line) is taken as pictures; anything else is pasted as
// text.
func (t *imageTray) pasted() bool {
	paths := imagePaths(t.u.app.Clipboard().Content())
	if len(paths) == 0 {
		return false
	}
	t.attachPaths(paths)
	return true
}

// imagePaths returns the files clip names, one a line, when every line is
// the absolute path or file:// URI of an existing file whose name is an
// image's; nil otherwise.
func imagePaths(clip string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(clip), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" {
			continue
		}
		if u, err := url.Parse(line); err == nil && u.Scheme == "file" {
			line = u.Path
		}
		if !filepath.IsAbs(line) || !images.LooksLikeImage(line) {
			return nil
		}
		if fi, err := os.Stat(line); err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		out = append(out, line)
	}
	if len(out) > images.MaxPerMessage {
		return nil
	}
	return out
}

// readImageFiles reads and checks the image files at paths; problems say,
// one phrase each, what could not be attached.
func readImageFiles(paths []string) (read []pendingImage, problems []string) {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s cannot be read (%v)", filepath.Base(p), unwrapPath(err)))
			continue
		}
		img, err := readImage(filepath.Base(p), f)
		f.Close()
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		read = append(read, img)
	}
	return read, problems
}

// readImage reads one picture named name from r, at most a byte over the
// limit, and checks it.
func readImage(name string, r io.Reader) (pendingImage, error) {
	data, err := io.ReadAll(io.LimitReader(r, images.MaxBytes+1))
	if err != nil {
		return pendingImage{}, fmt.Errorf("%s cannot be read (%v)", name, unwrapPath(err))
	}
	info, err := images.Check(name, data)
	if err != nil {
		return pendingImage{}, err
	}
	return pendingImage{name: name, data: data, info: info}, nil
}

// unwrapPath is err without the path a *PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fetchImage reads the stored picture sha of the shown session and makes
// its thumbnail off the UI goroutine, handing it to done on it.
func (u *UI) fetchImage(sha string, done func(image.Image, error)) {
	live := u.live
	if live == nil || live.sess == nil {
		u.bridge.Do(func() { done(nil, errors.New("no session is open")) })
		return
	}
	sess := live.sess
	u.bridge.Work(func() func() {
		data, err := sess.Images().Data(sha)
		var img image.Image
		if err == nil {
			img, err = chat.Thumbnail(data)
		}
		return func() { done(img, err) }
	})
}

// showImageError says in the banner why the pictures cannot be sent, with
// a Settings button when the model's setting is the reason.
func (u *UI) showImageError(err error) {
	msg := tw.UpperFirst(err.Error()) + "."
	if u.live != nil && u.live.sess != nil && !u.live.sess.Snapshot().Vision {
		u.banner.ShowAction(msg, "Settings", u.showSettings)
		return
	}
	u.banner.ShowError(msg)
}
