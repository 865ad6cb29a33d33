package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/workbench"
)

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

// The command line and the app used to disagree about the demo session's
// window (issue 12 #6): `tally inspect`, run while the app is open, reports
// the window the app's gauge shows.
func TestDemoWindowIsTheSameInTheAppAndOnTheCommandLine(t *testing.T) {
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	h := &harness{t: t, win: w, q: &queue{}, dir: t.TempDir()}
	h.ui = New(a, w, newBridgeWith(h.q.post), Options{DataDir: h.dir, Env: func(string) string { return "" },
		Serve: func(wb *workbench.Workbench) (func(), error) { return cli.ServeReads(wb, h.dir) }})
	w.Resize(fyne.NewSize(1200, 800))
	t.Cleanup(func() { h.ui.Close() })
	h.waitFor("the welcome", func() bool { return h.ui.sessions != nil && h.q.empty() })
	h.ui.startDemo()
	h.waitFor("the demo session", func() bool { return h.ui.live != nil && h.ui.live.sess != nil && h.ui.live.info.window > 0 })
	h.ui.stop()
	h.waitFor("the demo turn to stop", func() bool { return !h.ui.live.job.running })
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"inspect", "--data", h.dir, h.ui.live.id}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("tally inspect: exit %d, %s", code, errb.String())
	}
	var rep struct {
		Window int `json:"window"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, out.String())
	}
	if rep.Window != h.ui.live.info.window || gaugeWindow(h) != rep.Window {
		t.Errorf("command line window %d, app %d (gauge %d)", rep.Window, h.ui.live.info.window, gaugeWindow(h))
	}
}

// gaugeWindow is the window the gauge measures the level against.
func gaugeWindow(h *harness) int {
	_, window := h.ui.side.gauge.Level()
	return window
}
