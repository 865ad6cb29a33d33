// Package images checks the pictures a user or a tool attaches to a
// conversation: which kind of image a file is (by its first bytes, never
// its name), how large it is in pixels (from its header alone: the pixels
// are never decoded), and whether it is within the limits Tally sends.
//
// Image bytes are untrusted: every function here returns an error for
// input it cannot make sense of and never panics.
package images

import (
	"bytes"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/image/webp"

	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/internal/text"
)

// Media types of the images Tally sends.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
)

// Limits of what is sent. An image over them is refused with a message
// saying so; Tally never scales or recompresses an image, so the bytes the
// model sees are the user's.
const (
	// MaxBytes is the largest image file sent, 5 MB.
	MaxBytes = 5 << 20
	// MaxSide is the most pixels an image may have on a side.
	MaxSide = 8000
	// MaxPerMessage is the most images one message carries.
	MaxPerMessage = 20
)

// Info is what Check learnt of an image.
type Info struct {
	MediaType     string // PNG, JPEG, GIF or WebP
	Width, Height int    // pixels, from the header
	Size          int    // bytes
}

// Tokens is the estimated prompt cost of the image (see tokens.Image).
func (i Info) Tokens() int { return tokens.Image(i.Width, i.Height) }

// Kind is the short name of the image's type ("PNG"), for people.
func (i Info) Kind() string { return KindOf(i.MediaType) }

// String describes the image in a few words: "PNG, 800×600, 12 KB".
func (i Info) String() string {
	return fmt.Sprintf("%s, %d×%d, %s", i.Kind(), i.Width, i.Height, SizeText(i.Size))
}

// KindOf is the short name of a media type: "PNG" for image/png.
func KindOf(mediaType string) string {
	switch mediaType {
	case PNG:
		return "PNG"
	case JPEG:
		return "JPEG"
	case GIF:
		return "GIF"
	case WebP:
		return "WebP"
	}
	return "image"
}

// Sniff returns the media type the first bytes of data announce, or ""
// when they are none of PNG, JPEG, GIF and WebP.
func Sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return JPEG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return GIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// LooksLikeImage reports whether name ends in an extension of the images
// Tally sends (.png, .jpg, .jpeg, .gif, .webp), case-insensitively. It is
// a hint for choosing files; Check decides by the content.
func LooksLikeImage(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// Check returns what data is, or an error of one sentence naming name
// (the file, for people) when it is not a PNG, JPEG, GIF or WebP image
// whose header can be read, or when it is over MaxBytes or MaxSide.
func Check(name string, data []byte) (Info, error) {
	if name == "" {
		name = "the image"
	}
	if len(data) > MaxBytes {
		return Info{}, fmt.Errorf("%s is %s, over the %s limit for an image; make it smaller (crop it or save it as JPEG) and attach it again", name, SizeText(len(data)), SizeText(MaxBytes))
	}
	mt := Sniff(data)
	if mt == "" {
		return Info{}, fmt.Errorf("%s is not a PNG, JPEG, GIF or WebP image; attach one of those", name)
	}
	cfg, err := decodeConfig(mt, data)
	if err != nil {
		return Info{}, fmt.Errorf("%s starts like a %s image but its header cannot be read (%w); attach a valid image", name, KindOf(mt), err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Info{}, fmt.Errorf("%s says it is %d×%d pixels, which no image is; attach a valid image", name, cfg.Width, cfg.Height)
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide {
		return Info{}, fmt.Errorf("%s is %d×%d pixels, over the limit of %d on a side; scale it down and attach it again", name, cfg.Width, cfg.Height, MaxSide)
	}
	return Info{MediaType: mt, Width: cfg.Width, Height: cfg.Height, Size: len(data)}, nil
}

// decodeConfig reads the header of an image of media type mt. A decoder
// that panics on a malformed header is an error like any other.
func decodeConfig(mt string, data []byte) (cfg image.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = image.Config{}, fmt.Errorf("malformed header")
		}
	}()
	var dec func(io.Reader) (image.Config, error)
	switch mt {
	case PNG:
		dec = png.DecodeConfig
	case JPEG:
		dec = jpeg.DecodeConfig
	case GIF:
		dec = gif.DecodeConfig
	case WebP:
		dec = webp.DecodeConfig
	default:
		return image.Config{}, fmt.Errorf("unknown type %s", mt)
	}
	return dec(bytes.NewReader(data))
}

// SizeText is a byte count for people: "812 bytes", "12 KB", "4.2 MB".
func SizeText(n int) string {
	switch {
	case n < 1<<10:
		return text.Plural(n, "byte")
	case n < 1<<20:
		return fmt.Sprintf("%d KB", (n+1<<9)>>10)
	}
	mb := math.Round(float64(n)/(1<<20)*10) / 10
	return strconv.FormatFloat(mb, 'f', -1, 64) + " MB"
}
