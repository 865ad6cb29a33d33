package settings

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/workbench"
)

// The form is pre-filled from the environment, Save stores what it
// describes, a new form shows the stored values (never the key), and bad
// input is refused with a sentence.
func TestSettingsRoundTripThroughStore(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://env.example/v1"})
	f := newForm(h.host())
	if f.baseURL.Text != "http://env.example/v1" {
		t.Errorf("base URL not pre-filled from the environment: %q", f.baseURL.Text)
	}
	f.baseURL.SetText("http://localhost:8000/v1")
	f.model.SetText("qwen3-coder")
	test.Type(f.apiKey, "sk-test-1234567890")
	f.window.SetText("131072")
	f.hit.SetText("0.1")
	f.miss.SetText("1.5")
	f.compl.SetText("3")
	f.theme.SetSelected("Dark")
	if !f.memory.Checked {
		t.Error("the memory proposal on leaving a session is off by default")
	}
	f.memory.SetChecked(false)
	if !f.save() {
		t.Fatalf("save refused: %s", f.problem.Text)
	}
	want := workbench.Settings{BaseURL: "http://localhost:8000/v1", Model: "qwen3-coder", APIKey: "sk-test-1234567890",
		ContextWindow: 131072, Theme: "dark",
		Prices: map[string]workbench.Price{"qwen3-coder": {CacheHit: 0.1, CacheMiss: 1.5, Completion: 3}}}
	got := h.wb.Settings()
	if got.BaseURL != want.BaseURL || got.APIKey != want.APIKey || got.ContextWindow != want.ContextWindow ||
		got.Theme != want.Theme || got.Prices["qwen3-coder"] != want.Prices["qwen3-coder"] || !got.NoMemoryOnLeave {
		t.Fatalf("stored settings = %+v; want %+v", got, want)
	}
	// A new form shows the stored values, without the key in any field.
	clear(h.env)
	g := newForm(h.host())
	if g.baseURL.Text != want.BaseURL || g.model.Text != want.Model || g.window.Text != "131072" ||
		g.miss.Text != "1.5" || g.theme.Selected != "Dark" || g.apiKey.Text != "" || g.memory.Checked {
		t.Errorf("reloaded form: url %q model %q window %q miss %q theme %q key %q",
			g.baseURL.Text, g.model.Text, g.window.Text, g.miss.Text, g.theme.Selected, g.apiKey.Text)
	}
	// Bad input is refused with a sentence, not a panic.
	g.window.SetText("lots")
	if g.save() || !strings.Contains(g.problem.Text, "context window") {
		t.Errorf("a bad window was accepted or explained as %q", g.problem.Text)
	}
}
