package cli

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// tally run --image FILE sends the file's exact bytes as an image part of
// the prompt to a model that accepts images, and refuses, without a
// request or a session, for one that does not.
func TestRunImage(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("A black square.") }))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1024, 1024))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	if err := os.WriteFile(shot, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("not a picture"), 0o644)
	data, ws := t.TempDir(), workspace(t)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runCLI(t, append([]string{"run", "--data", data, "--base-url", srv.URL(), "--workspace", ws}, args...)...)
	}

	out, errOut, code := run("--model", "gpt-4o", "--image", shot, "What is this?")
	if code != 0 || !strings.Contains(out, "A black square.") {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "image "+shot+": PNG, 1024×1024") || !strings.Contains(errOut, "about 765 tokens") {
		t.Errorf("stderr does not tell the image and its estimate: %q", errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	user := reqs[0].Messages[1]
	if len(user.Images) != 1 || !bytes.Equal(user.Images[0].Data, b.Bytes()) || !strings.Contains(user.Content, "What is this?") {
		t.Errorf("the request's user message: %q with %d images", user.Content, len(user.Images))
	}

	// A model without vision: refused before anything is sent or made.
	_, errOut, code = run("--model", "deepseek-chat", "--image", shot, "What is this?")
	if code != ExitFail || !strings.Contains(errOut, "deepseek-chat does not accept images") || !strings.Contains(errOut, "--vision") {
		t.Errorf("without vision: exit %d, stderr %q", code, errOut)
	}
	// --vision says it does.
	if _, errOut, code = run("--model", "deepseek-chat", "--vision", "--image", shot); code != 0 {
		t.Errorf("--vision with an image and no text: exit %d, %s", code, errOut)
	}
	// Not an image, or not there: refused at once.
	for _, f := range []string{notes, filepath.Join(dir, "gone.png")} {
		if _, errOut, code = run("--model", "gpt-4o", "--image", f, "look"); code != ExitFail || !strings.Contains(errOut, "--image") {
			t.Errorf("--image %s: exit %d, stderr %q", f, code, errOut)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests; want 2 (the refused runs send nothing)", n)
	}
	sessions, _, _ := runCLI(t, "sessions", "--data", data)
	if n := len(strings.Split(strings.TrimSpace(sessions), "\n")); n != 2 {
		t.Errorf("%d sessions; want 2 (the refused runs make none):\n%s", n, sessions)
	}
}
