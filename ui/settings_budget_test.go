package ui

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
)

// TestKeepUnderSettings: "Keep the context under" offers Auto, the
// window's default and fixed levels, each with its forecast cost for the
// open session; the choice is stored and reaches the engine's thresholds.
func TestKeepUnderSettings(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("done")))
	defer srv.Close()
	env := endpoint(srv)
	env["TALLY_MODEL"] = "deepseek-chat" // a known model with list prices
	h := newHarness(t, env)
	f := openSettingsDialog(h)
	if got := f.sel("Keep the context under").Selected; got != "Auto" || !f.says("open a session to see each choice's forecast cost") {
		t.Fatalf("with no session: selected %q, or a forecast", got)
	}
	h.newSession()
	h.send("hello")
	h.waitIdle()
	f = openSettingsDialog(h)
	keep := f.sel("Keep the context under")
	opts := keep.Options
	if len(opts) < 3 || !strings.HasPrefix(keep.Selected, "Auto (") {
		t.Fatalf("choices %q, selected %q", opts, keep.Selected)
	}
	for _, o := range opts {
		if !strings.Contains(o, "$") || !strings.Contains(o, "compaction") {
			t.Errorf("the choice %q has no forecast cost", o)
		}
	}
	var fixed string
	for _, o := range opts {
		if strings.HasPrefix(o, "64K tokens") {
			fixed = o
		}
	}
	if fixed == "" {
		t.Fatalf("no 64K choice under the 128K window's default: %q", opts)
	}
	keep.SetSelected(fixed)
	if !f.save() {
		t.Fatal("save refused")
	}
	h.waitFor("the setting to be stored", func() bool { return h.ui.wb.Settings().KeepUnder != "" })
	if got := h.ui.wb.Settings().KeepUnder; got != "64000" {
		t.Errorf("stored keep_under %q; want 64000", got)
	}
	cfg, _ := h.ui.agentConfig(&liveSession{}, false)
	if cfg.KeepUnder != 64_000 {
		t.Errorf("agent config KeepUnder = %d; want 64000", cfg.KeepUnder)
	}
	h.waitFor("the session to reopen", func() bool { return h.ui.live != nil && h.ui.live.sess != nil && h.q.empty() })
	if c := h.ui.live.sess.Snapshot().CompactAt; c != 64_000 {
		t.Errorf("a 64K level compacts at %d; want 64,000", c)
	}
	g := openSettingsDialog(h)
	keep = g.sel("Keep the context under")
	if !strings.HasPrefix(keep.Selected, "64K tokens") {
		t.Errorf("reloaded form selects %q", keep.Selected)
	}
	for _, o := range keep.Options {
		if strings.HasPrefix(o, "The window's default") {
			keep.SetSelected(o)
		}
	}
	if !g.save() {
		t.Fatal("save refused")
	}
	h.waitFor("the setting to be stored", func() bool { return h.ui.wb.Settings().KeepUnder == workbench.KeepUnderWindow })
	if cfg, _ := h.ui.agentConfig(&liveSession{}, false); cfg.KeepUnder != 0 {
		t.Errorf("the window's default gave KeepUnder %d; want 0", cfg.KeepUnder)
	}
	h.ui.showSettings()
	if !h.shows("Keep the context under") || !h.shows("a compaction costs once") {
		t.Error("the settings do not explain the choice")
	}
}
