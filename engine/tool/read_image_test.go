package tool

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/images"
)

func testPNG(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReadFileImage(t *testing.T) {
	shot := testPNG(t, 1024, 1024)
	_, env := newWorkspace(t, map[string]string{
		"shot.png":   shot,
		"fake.png":   "\x89PNG\r\n\x1a\n\x00\x00 not a png after all",
		"misnamed.t": shot,
		"big.png":    shot + strings.Repeat("\x00", images.MaxBytes),
	})

	// Without vision: a line saying why, naming the setting.
	res := call(t, ReadFile(), env, map[string]any{"path": "shot.png"})
	if res.IsError || res.Image != nil {
		t.Fatalf("without vision: %+v", res)
	}
	mustContain(t, res.Content, "shot.png: PNG image", "cannot see images", images.VisionSetting)

	// With vision: the picture itself, whatever the file's name.
	env.Vision = true
	for _, p := range []string{"shot.png", "misnamed.t"} {
		res = call(t, ReadFile(), env, map[string]any{"path": p, "offset": 3})
		if res.IsError || res.Image == nil {
			t.Fatalf("%s with vision: %+v", p, res)
		}
		if !bytes.Equal(res.Image.Data, []byte(shot)) || res.Image.Info.Width != 1024 || res.Image.Info.MediaType != "image/png" {
			t.Errorf("%s: image = %+v", p, res.Image.Info)
		}
		mustContain(t, res.Content, p+": PNG, 1024×1024", "attached below", "765 tokens")
		if len(res.Paths) != 1 || res.Paths[0] != p {
			t.Errorf("paths = %v", res.Paths)
		}
	}

	// Over the limit: not attached, and the limit named.
	res = call(t, ReadFile(), env, map[string]any{"path": "big.png"})
	if res.Image != nil || !strings.Contains(res.Content, "images over 5 MB are not sent") {
		t.Errorf("an image over the limit: %+v", res.Content)
	}

	// A broken image is not attached.
	res = call(t, ReadFile(), env, map[string]any{"path": "fake.png"})
	if res.Image != nil || !strings.Contains(res.Content, "not shown") {
		t.Errorf("a broken PNG: %+v", res)
	}
}
