package acp

import (
	"os"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
)

// TestModelCommandSwitchesTheSession: /model @PROFILE NAME typed in the
// editor switches the session, and the next prompt goes to the profile's
// server with the whole conversation.
func TestModelCommandSwitchesTheSession(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("from main")))
	local := llmtest.New(llmtest.Sequence(llmtest.Text("from local")))
	t.Cleanup(local.Close)
	w, _, err := workbench.Open(f.data, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Settings().PutProfile(workbench.Profile{Name: "local", BaseURL: local.URL(), Model: "qwen3-8b"})
	if err == nil {
		err = w.SaveSettings(s)
	}
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	h := f.connect(t, "")
	id := f.newSession(t, h).SessionId
	prompt(t, h, id, "hello")
	prompt(t, h, id, "/model @nope")
	prompt(t, h, id, "/model @local")
	prompt(t, h, id, "and now?")
	text := summarize(h.client.take()).text
	for _, want := range []string{"from main", "The model stays deepseek-chat: ", "This session now talks to qwen3-8b (profile local)", "from local"} {
		if !strings.Contains(text, want) {
			t.Errorf("the editor was not told %q:\n%s", want, text)
		}
	}
	if reqs := local.Requests(); len(reqs) != 1 || reqs[0].Model != "qwen3-8b" || !strings.Contains(string(reqs[0].Body), "hello") {
		t.Errorf("the profile's server got %d requests", len(reqs))
	}
}
