package ui

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/workbench"
)

func TestCompactionCycleAndWarmUpSettings(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://localhost:1/v1", "OPENAI_API_KEY": "k"})
	f := h.ui.newSettingsForm()
	if f.compactM.Selected != "Automatic" || f.cycleAt.Text != "" || f.cyclesOff.Checked || f.warmUp.Checked {
		t.Fatalf("defaults: %q %q %v %v", f.compactM.Selected, f.cycleAt.Text, f.cyclesOff.Checked, f.warmUp.Checked)
	}
	f.compactM.SetSelected("Ask me first")
	f.cycleAt.SetText("60")
	f.warmUp.SetChecked(true)
	if !f.save() {
		t.Fatalf("save refused: %s", f.result.Text)
	}
	var got workbench.Settings
	h.waitFor("the settings to be stored", func() bool {
		got = h.ui.wb.Settings()
		return got.Compaction != ""
	})
	if got.Compaction != workbench.CompactionAsk || got.CycleAt != 0.6 || got.CyclesOff || !got.WarmUp {
		t.Fatalf("stored %+v", got)
	}
	cfg, _ := h.ui.agentConfig(&liveSession{}, false)
	if cfg.Compaction != rewrite.Ask || cfg.CycleAt != 0.6 || cfg.Asker == nil {
		t.Errorf("agent config: compaction %q, cycle at %v, asker %v", cfg.Compaction, cfg.CycleAt, cfg.Asker)
	}
	g := h.ui.newSettingsForm()
	if g.compactM.Selected != "Ask me first" || g.cycleAt.Text != "60" || !g.warmUp.Checked {
		t.Errorf("reloaded form: %q %q %v", g.compactM.Selected, g.cycleAt.Text, g.warmUp.Checked)
	}
	g.cyclesOff.SetChecked(true)
	g.cycleAt.SetText("5")
	if g.save() || !strings.Contains(g.result.Text, "between 10 and 100") {
		t.Errorf("a 5 %% cycle threshold was accepted or explained as %q", g.result.Text)
	}
	g.cycleAt.SetText("")
	if !g.save() {
		t.Fatal(g.result.Text)
	}
	h.waitFor("the settings to be stored", func() bool { return h.ui.wb.Settings().CyclesOff })
	if cfg, _ := h.ui.agentConfig(&liveSession{}, false); cfg.CycleAt >= 0 {
		t.Errorf("cycles off gave CycleAt %v; want negative", cfg.CycleAt)
	}
	for _, s := range []string{"the next request misses the cache", "first turn hits the cache"} {
		h.ui.showSettings()
		if !h.shows(s) {
			t.Errorf("settings do not explain the cache cost: %q", s)
		}
	}
}
