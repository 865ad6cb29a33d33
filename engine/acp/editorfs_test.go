package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestTheEditorsBuffersAreWhatTheFileToolsSee: a client that offers the
// file-system methods gives read_file and edit_file its buffer, unsaved
// change included; the edit keeps that change and the client is shown
// the new text.
func TestTheEditorsBuffersAreWhatTheFileToolsSee(t *testing.T) {
	var readResult string
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		switch toolResultCount(r.Messages) {
		case 0:
			return llmtest.Call("read_file", `{"path":"notes.txt"}`)
		case 1:
			readResult = r.Messages[len(r.Messages)-1].Content
			return llmtest.Call("edit_file", `{"path":"notes.txt","old_string":"draft","new_string":"final"}`)
		}
		return llmtest.Text("done")
	})
	f := newFixtureWith(t, script)
	disk := filepath.Join(f.ws, "notes.txt")
	if err := os.WriteFile(disk, []byte("saved draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.buffers = map[string]string{disk: "saved draft\nan unsaved line\n"}
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "tidy the notes")
	if !strings.Contains(readResult, "an unsaved line") {
		t.Errorf("read_file did not see the editor's buffer:\n%s", readResult)
	}
	want := "saved final\nan unsaved line\n"
	if got := f.read(t, "notes.txt"); got != want {
		t.Errorf("the file holds %q; want the edit applied to the buffer, %q", got, want)
	}
	if h.client.wrote[disk] != want {
		t.Errorf("the client was shown %q", h.client.wrote[disk])
	}
}

// toolResultCount counts the tool results among msgs.
func toolResultCount(msgs []llmtest.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}
