package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The Model and effort dialog sets the session's reasoning effort: the
// footer shows it at once and the next request carries it. The main
// connection then rate-limits past its wait: the turn goes on with the
// fallback profile, the chat and the footer say so, and the chart marks
// the switch.
func TestEffortAndFallbackShowInTheChatAndTheFooter(t *testing.T) {
	down := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Reply{Fault: llmtest.Fault429} }),
		llmtest.WithRetryAfter(3600))
	t.Cleanup(down.Close)
	up := llmtest.New(llmtest.Sequence(llmtest.Text("answered by the backup")))
	t.Cleanup(up.Close)
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": down.URL(), "OPENAI_API_KEY": "dummy", "TALLY_MODEL": "primary-model", "TALLY_KEYCHAIN": "off"})
	s := h.ui.wb.Settings()
	s, err := s.PutProfile(workbench.Profile{Name: "backup", BaseURL: up.URL(), Model: "backup-model"})
	if err == nil {
		s, err = s.SetFallback([]string{"backup"})
	}
	if err == nil {
		err = h.ui.wb.SaveSettings(s)
	}
	if err != nil {
		t.Fatal(err)
	}
	h.newSession()

	h.ui.showModelDialog(h.ui.live)
	var selects []*widget.Select
	fynetest.Walk(h.win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if s, ok := o.(*widget.Select); ok {
			selects = append(selects, s)
		}
		return true
	})
	if len(selects) != 5 || !h.shows("Effort (session)") || !h.shows("Effort (summaries)") {
		t.Fatalf("the dialog has %d selects; want the endpoint and four efforts", len(selects))
	}
	selects[1].SetSelected("high")
	selects[3].SetSelected("off")
	h.tapInDialog("Apply")
	footer := func() string { return h.ui.footer.State.Text(time.Now()) }
	h.waitFor("the footer to show the effort", func() bool { return strings.Contains(footer(), "effort high (summaries off)") })

	h.send("hello")
	h.waitIdle()
	reqs := up.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"chat_template_kwargs":{"enable_thinking":true,"reasoning_effort":"high"}`) {
		t.Fatalf("the fallback's request does not carry the effort: %+v", reqs)
	}
	if !h.shows("so this turn goes on with the fallback: primary-model → backup-model (backup)") || !h.shows("answered by the backup") {
		t.Error("the chat does not say the turn fell back")
	}
	if f := footer(); !strings.Contains(f, "primary-model · fell back to backup-model · effort high") {
		t.Errorf("footer %q", f)
	}
	rows := h.ui.live.rows
	if len(rows) != 1 || !strings.HasPrefix(rows[0].Fallback, "primary-model → backup-model (backup)") || rows[0].Effort != "high" {
		t.Fatalf("the ledger rows: %+v", rows)
	}
	if p := h.ui.side.chart.Points(); len(p) != 1 || p[0].Marker != tw.MarkerFallback || !strings.Contains(h.ui.side.chart.Details(0), "Fell back primary-model") {
		t.Errorf("the chart does not mark the fallback: %+v", p)
	}
}

// Settings → Endpoint profiles previews the fallback chain typed in: each
// fallback starts a new cache prefix, and the context re-sent at its miss
// price costs this much; Save keeps the chain.
func TestSettingsPreviewsTheFallbackChain(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "k", "TALLY_MODEL": "primary-model", "TALLY_KEYCHAIN": "off"})
	s, err := h.ui.wb.Settings().PutProfile(workbench.Profile{Name: "backup", BaseURL: "http://127.0.0.1:2/v1", Model: "backup-model"})
	if err == nil {
		s.Prices = map[string]workbench.Price{"backup-model": {CacheMiss: 2}}
		err = h.ui.wb.SaveSettings(s)
	}
	if err != nil {
		t.Fatal(err)
	}
	h.ui.settings = h.ui.wb.Settings()
	d := openSettingsDialog(h)
	var chain *tw.EscEntry
	fynetest.Walk(d.row("Endpoint profiles"), func(o fyne.CanvasObject) bool {
		if e, ok := o.(*tw.EscEntry); ok && strings.HasPrefix(e.PlaceHolder, "none — e.g.") {
			chain = e
		}
		return chain == nil
	})
	if chain == nil {
		t.Fatal("Settings has no fallback chain field")
	}
	chain.SetText("nope")
	if !d.says(`The fallback "nope" is not a saved profile`) {
		t.Error("an unknown profile is not refused")
	}
	chain.SetText("backup")
	if !d.says("backup: backup-model on 127.0.0.1:2 — a new cache prefix; re-sending 50k tokens costs $0.1000 at its miss price") {
		t.Error("the chain's preview does not price the switch")
	}
	if !d.save() {
		t.Fatal("Save refused the settings")
	}
	h.waitFor("the chain to be saved", func() bool { got := h.ui.wb.Settings().Fallback; return len(got) == 1 && got[0] == "backup" })
}
