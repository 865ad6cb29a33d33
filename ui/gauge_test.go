package ui

import "testing"

// On a 1M-token window the cycle (75 %) used to come before automatic
// compaction (96.7 %), so compaction never ran (issue 12 #18): the gauge
// marks compaction first.
func TestGaugeMarksCompactionBeforeTheCycleOnA1MWindow(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "k", "TALLY_MODEL": "deepseek-v4-flash"})
	s := h.ui.wb.Settings()
	s.ContextWindow = 1_000_000
	if err := h.ui.wb.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	h.newSession()
	marks := map[string]int{}
	for _, m := range h.ui.side.gauge.Marks() {
		marks[m.Label] = m.Tokens
	}
	if marks["compact"] == 0 || marks["cycle"] == 0 || marks["compact"] >= marks["cycle"] {
		t.Errorf("gauge marks %v: compaction must come before the cycle", marks)
	}
}
