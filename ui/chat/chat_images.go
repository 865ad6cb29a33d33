package chat

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // the decoders of the pictures Tally sends, for the thumbnails
	_ "image/jpeg"
	_ "image/png"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/transcript"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Thumbnails of the pictures in the chat: under the text of the message
// that carries them (the user's, or the one a tool's images went in), a
// fixed-size picture each, so a row's height does not wait for the bytes.
// The bytes come from the session's blob store and are decoded and scaled
// off the UI goroutine, once per picture; until then a blank box of the
// same size stands in, and a picture that cannot be shown says so.

// thumbW and thumbH bound a thumbnail.
const (
	ThumbW = 200
	ThumbH = 150
)

// thumbs is the chat's cache of decoded thumbnails, by SHA-256.
type thumbs struct {
	Done    map[string]image.Image // the decoded thumbnails, by SHA-256
	failed  map[string]bool
	loading map[string][]*Item // rows waiting for each picture
	// Fetch reads and decodes a picture off the UI goroutine and hands the
	// thumbnail (or an error) to done on it; nil shows none.
	Fetch func(sha string, done func(image.Image, error))
}

// forget drops the thumbnails and failures kept for the conversation
// shown before: a picture that could not be read then may be readable now,
// and pictures no row shows need not stay in memory.
func (t *thumbs) forget() { t.Done, t.failed, t.loading = nil, nil, nil }

func (t *thumbs) keep(sha string, img image.Image) {
	if t.Done == nil {
		t.Done = map[string]image.Image{}
	}
	t.Done[sha] = img
}

// thumb returns the thumbnail of ref for row it, asking for it when it is
// not there yet.
func (c *View) thumb(ref transcript.ImageRef, it *Item) fyne.CanvasObject {
	t := &c.Thumbs
	caption := &widget.Label{Text: fmt.Sprintf("%s · %d×%d", ref.Name, ref.Width, ref.Height),
		Truncation: fyne.TextTruncateEllipsis, SizeName: theme.SizeNameCaptionText, Importance: widget.LowImportance}
	if ref.Name == "" {
		caption.Text = fmt.Sprintf("%s %d×%d", images.KindOf(ref.MediaType), ref.Width, ref.Height)
	}
	var pic fyne.CanvasObject
	switch img := t.Done[ref.SHA256]; {
	case img != nil:
		ci := canvas.NewImageFromImage(img)
		ci.FillMode = canvas.ImageFillContain
		ci.ScaleMode = canvas.ImageScaleSmooth
		ci.SetMinSize(fyne.NewSize(ThumbW, ThumbH))
		pic = ci
	case t.failed[ref.SHA256]:
		pic = container.NewStack(blankThumb(), container.NewCenter(&widget.Label{Text: "image not available", Importance: widget.LowImportance}))
	default:
		pic = blankThumb()
		c.loadThumb(ref.SHA256, it)
	}
	return container.NewBorder(nil, caption, nil, nil, pic)
}

// blankThumb is the box a thumbnail takes before its picture is there.
func blankThumb() fyne.CanvasObject {
	r := tw.NewThemedRect(theme.ColorNameInputBackground)
	r.SetMinSize(fyne.NewSize(ThumbW, ThumbH))
	return r
}

// loadThumb asks for the picture sha once and redraws every row waiting
// for it when it arrives.
func (c *View) loadThumb(sha string, it *Item) {
	t := &c.Thumbs
	if t.Fetch == nil {
		return
	}
	if t.loading == nil {
		t.loading = map[string][]*Item{}
	}
	waiting, asked := t.loading[sha]
	if it != nil {
		waiting = append(waiting, it)
	}
	t.loading[sha] = waiting // present: asked for
	if asked {
		return
	}
	t.Fetch(sha, func(img image.Image, err error) {
		rows := t.loading[sha]
		delete(t.loading, sha)
		if err != nil || img == nil {
			if t.failed == nil {
				t.failed = map[string]bool{}
			}
			t.failed[sha] = true
		} else {
			t.keep(sha, img)
		}
		for _, row := range rows {
			c.RefreshItem(row)
		}
	})
}

// Thumbnail decodes the picture data and scales it to fit thumbW×thumbH.
// The bytes are untrusted: they are checked (type, size, pixels) first,
// and a decoder's panic is an error.
func Thumbnail(data []byte) (img image.Image, err error) {
	if _, err := images.Check("the image", data); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, errors.New("the image cannot be decoded")
		}
	}()
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil, errors.New("the image is empty")
	}
	scale := min(float64(ThumbW*2)/float64(w), float64(ThumbH*2)/float64(h), 1)
	dw, dh := max(int(float64(w)*scale), 1), max(int(float64(h)*scale), 1)
	dst := image.NewNRGBA(image.Rect(0, 0, dw, dh))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.Transparent), image.Point{}, draw.Src)
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	return dst, nil
}
