package images

import "testing"

// FuzzCheck feeds bytes to the image check: it never panics, and an image
// it accepts has a size and a media type it names.
func FuzzCheck(f *testing.F) {
	f.Add(pngBytes(f, 4, 3))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Add([]byte("\xff\xd8\xff\xe0"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Check("x.png", data)
		if err != nil {
			return
		}
		if info.Width <= 0 || info.Height <= 0 || info.MediaType == "" {
			t.Fatalf("accepted %+v", info)
		}
	})
}
