package images

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

// pngBytes encodes a w×h PNG for tests.
func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpLossless is a 1×1 lossless WebP image.
const webpLossless = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

func TestCheckKnownTypes(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 30, 20))
	var jb, gb bytes.Buffer
	if err := jpeg.Encode(&jb, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gb, img, nil); err != nil {
		t.Fatal(err)
	}
	wb, _ := base64.StdEncoding.DecodeString(webpLossless)
	for _, c := range []struct {
		data []byte
		mt   string
		w, h int
	}{
		{pngBytes(t, 800, 600), PNG, 800, 600},
		{jb.Bytes(), JPEG, 30, 20},
		{gb.Bytes(), GIF, 30, 20},
		{wb, WebP, 1, 1},
	} {
		info, err := Check("x", c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.mt, err)
		}
		if info.MediaType != c.mt || info.Width != c.w || info.Height != c.h || info.Size != len(c.data) {
			t.Errorf("Check(%s) = %+v; want %s %d×%d", c.mt, info, c.mt, c.w, c.h)
		}
	}
	if got := (Info{MediaType: PNG, Width: 800, Height: 600, Size: 12 << 10}).String(); got != "PNG, 800×600, 12 KB" {
		t.Errorf("String = %q", got)
	}
	if got := (Info{Width: 1024, Height: 1024}).Tokens(); got != 765 {
		t.Errorf("Tokens = %d; want 765", got)
	}
}

func TestCheckRefuses(t *testing.T) {
	big := append(pngBytes(t, 4, 4), make([]byte, MaxBytes)...)
	huge := pngBytes(t, MaxSide+1, 1)
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"text":      {[]byte("hello, world"), "is not a PNG, JPEG, GIF or WebP image"},
		"empty":     {nil, "is not a PNG"},
		"too large": {big, "over the 5 MB limit"},
		"too wide":  {huge, "over the limit of 8000 on a side"},
		"truncated": {[]byte("\x89PNG\r\n\x1a\n\x00\x00"), "header cannot be read"},
		"bad jpeg":  {[]byte("\xff\xd8\xff\xe0garbage"), "header cannot be read"},
		"bad webp":  {[]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "header cannot be read"},
	} {
		_, err := Check("shot.png", c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "shot.png ") {
			t.Errorf("%s: err = %v; want one naming shot.png and saying %q", name, err, c.want)
		}
	}
}

// Random and mangled bytes never panic: image files are untrusted.
func TestCheckNeverPanics(t *testing.T) {
	wb, _ := base64.StdEncoding.DecodeString(webpLossless)
	seeds := [][]byte{pngBytes(t, 3, 3), wb, []byte("GIF89a\x01\x00"), []byte("\xff\xd8\xff")}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		s := seeds[i%len(seeds)]
		d := append([]byte(nil), s[:r.IntN(len(s)+1)]...)
		for range r.IntN(6) {
			if len(d) > 0 {
				d[r.IntN(len(d))] = byte(r.IntN(256))
			}
		}
		d = append(d, make([]byte, r.IntN(8))...)
		_, _ = Check("f", d)
	}
}

func TestSniffAndNames(t *testing.T) {
	if Sniff([]byte("RIFF1234WAVE")) != "" {
		t.Error("a WAV file sniffed as an image")
	}
	for name, want := range map[string]bool{"a.PNG": true, "b.jpeg": true, "c.jpg": true, "d.gif": true, "e.webp": true, "f.svg": false, "g": false} {
		if LooksLikeImage(name) != want {
			t.Errorf("LooksLikeImage(%q) = %v", name, !want)
		}
	}
	for n, want := range map[int]string{812: "812 bytes", 12 << 10: "12 KB", MaxBytes: "5 MB", 4400000: "4.2 MB"} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q; want %q", n, got, want)
		}
	}
}
