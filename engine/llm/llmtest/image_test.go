package llmtest

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

func imageMsg(role, text, url string) map[string]any {
	return map[string]any{"role": role, "content": []any{
		map[string]any{"type": "text", "text": text},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": url, "detail": "high"}},
	}}
}

func TestImagePartsRecorded(t *testing.T) {
	for _, tmpl := range []string{TemplateQwen35, TemplatePlain} {
		srv := New(Sequence(Text("a cat")), WithTemplate(tmpl))
		data := []byte("\x89PNG\r\n\x1a\nsome bytes")
		url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
		status, _, body := post(t, srv, chat(imageMsg("user", "what is it?", url)))
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tmpl, status, body)
		}
		rec := srv.Requests()[0]
		m := rec.Messages[0]
		if m.Content != "what is it?" || len(m.Images) != 1 {
			t.Fatalf("%s: recorded %+v", tmpl, m)
		}
		img := m.Images[0]
		if img.URL != url || img.MediaType != "image/png" || !bytes.Equal(img.Data, data) || img.Detail != "high" {
			t.Errorf("%s: image = %+v", tmpl, img)
		}
		if tmpl == TemplatePlain && !strings.Contains(rec.Rendered, "<|image ") {
			t.Errorf("the plain rendering leaves the image out: %q", rec.Rendered)
		}
		srv.Close()
	}
}

func TestImagePartsRejected(t *testing.T) {
	srv := New(nil)
	defer srv.Close()
	good := "data:image/png;base64,iVBORw0KGgo="
	for name, c := range map[string]struct {
		body, want string
	}{
		"assistant image": {chat(msg("user", "hi"), imageMsg("assistant", "x", good)), "only allowed for messages with role 'user'"},
		"no url":          {chat(map[string]any{"role": "user", "content": []any{map[string]any{"type": "image_url", "image_url": map[string]any{}}}}), "image_url.url"},
		"not base64":      {chat(imageMsg("user", "x", "data:image/png;base64,@@@")), "not valid base64"},
		"not an image":    {chat(imageMsg("user", "x", "data:text/plain;base64,aGk=")), "image MIME type"},
	} {
		status, _, body := post(t, srv, c.body)
		if status != http.StatusBadRequest || !strings.Contains(errorMessage(t, body), c.want) {
			t.Errorf("%s: status %d, %s; want 400 saying %q", name, status, body, c.want)
		}
	}
}
