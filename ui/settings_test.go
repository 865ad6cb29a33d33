package ui

import (
	"testing"

	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/workbench"
)

func TestCompactionCycleAndWarmUpSettings(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://localhost:1/v1", "OPENAI_API_KEY": "k"})
	f := openSettingsDialog(h)
	compaction, cycleAt, cyclesOff, warmUp := f.sel("Compaction"), f.entry("New cycle at"), f.check("New cycle at"), f.check("Cache warm-up")
	if compaction.Selected != "Automatic" || cycleAt.Text != "" || cyclesOff.Checked || warmUp.Checked {
		t.Fatalf("defaults: %q %q %v %v", compaction.Selected, cycleAt.Text, cyclesOff.Checked, warmUp.Checked)
	}
	compaction.SetSelected("Ask me first")
	cycleAt.SetText("60")
	warmUp.SetChecked(true)
	if !f.save() {
		t.Fatal("save refused")
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
	g := openSettingsDialog(h)
	compaction, cycleAt, cyclesOff, warmUp = g.sel("Compaction"), g.entry("New cycle at"), g.check("New cycle at"), g.check("Cache warm-up")
	if compaction.Selected != "Ask me first" || cycleAt.Text != "60" || !warmUp.Checked {
		t.Errorf("reloaded form: %q %q %v", compaction.Selected, cycleAt.Text, warmUp.Checked)
	}
	cyclesOff.SetChecked(true)
	cycleAt.SetText("5")
	if g.save() || !g.says("between 10 and 100") {
		t.Error("a 5 % cycle threshold was accepted or not explained")
	}
	cycleAt.SetText("")
	if !g.save() {
		t.Fatal("save refused")
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
