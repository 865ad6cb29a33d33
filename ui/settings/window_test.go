package settings

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// Test connection against a local llama-server says the context window
// the server serves, read from its /props, and that sessions use it while
// the window field is empty.
func TestTestConnectionSaysALocalServersWindow(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithContextWindow(8192))
	defer srv.Close()
	h := newHarness(t, nil)
	f := h.open()
	f.baseURL.SetText(srv.URL())
	f.model.SetText("smollm2")
	test.Tap(f.testB)
	h.waitFor("the test's result", func() bool { return strings.HasPrefix(f.result.Text, "OK") })
	if want := "context window of 8,192 tokens (its /props); sessions use it."; !strings.Contains(f.result.Text, want) {
		t.Errorf("the result says %q; want it to say %q", f.result.Text, want)
	}
	f.window.SetText("4096")
	test.Tap(f.testB)
	h.waitFor("the second result", func() bool { return strings.Contains(f.result.Text, "4,096 set here") })
}
