package ui

// The app and the command line side by side: while the app holds the
// store, the command line reads through it, and both show the same
// numbers for the same session.

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
)

// With the app open, every command line command used to fail with
// "already open by another Tally" (issue 12 #15): reading commands run
// inside the app, writing commands say the app holds the session.
func TestCommandLineReadsWhileTheAppIsOpen(t *testing.T) {
	h := openHarness(t, nil, true)
	h.newSession()
	id := h.ui.live.id

	var out, errb bytes.Buffer
	if code := cli.Main([]string{"sessions", "--data", h.dir}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), id) {
		t.Errorf("tally sessions while the app is open: exit %d, out %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := cli.Main([]string{"export", "--data", h.dir, id}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Errorf("tally export while the app is open: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code := cli.Main([]string{"run", "--data", h.dir, "--session", id, "hello"}, strings.NewReader(""), &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "the Tally app has this data open") {
		t.Errorf("a writing command: exit %d, stderr %q", code, errb.String())
	}
	// The app's store is still open and working after serving.
	if _, err := h.ui.wb.Sessions(); err != nil {
		t.Errorf("serving closed the app's store: %v", err)
	}
}

// One number per concept: the same session rendered through the app's view
// models and through the command line shows the same context level, the
// same cost and the same compaction preview totals.
func TestTheAppAndTheCommandLineShowTheSameNumbers(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("read_file", `{"path":"notes.txt"}`),
		llmtest.Text("The notes say hello."),
		llmtest.Call("list_dir", `{}`),
		llmtest.Text("Two files."),
	))
	defer srv.Close()
	env := endpoint(srv)
	h := newHarness(t, env)
	s := h.ui.settings
	s.Prices = map[string]workbench.Price{"test-model": {CacheHit: 0.1, CacheMiss: 1, Completion: 2}}
	h.ui.applySettings(s)
	h.waitFor("the prices to be stored", func() bool { _, ok := h.ui.wb.Settings().PriceFor("test-model"); return ok })
	ws := h.newSession()
	writeFile(t, ws, "notes.txt", strings.Repeat("hello notes\n", 200))
	h.send("read the notes")
	h.waitIdle()
	h.send("list the files")
	h.waitIdle()
	id := h.ui.live.id

	// The app's numbers.
	appLevel, _ := h.ui.side.gauge.Level()
	appCost, appKnown := h.ui.footer.State.Cost, h.ui.footer.State.CostKnown
	chartCost := h.ui.side.chart.Totals().Cost
	var plan compact.Plan
	done := make(chan error, 1)
	go func() {
		var err error
		plan, err = h.ui.live.ops.PreviewCompaction()
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.ui.Close()

	// The command line's numbers, from the same store.
	run := func(args ...string) []byte {
		var out, errb bytes.Buffer
		args = append(args, "--data", h.dir, id)
		if code := cli.Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("tally %v: exit %d: %s", args, code, errb.String())
		}
		return out.Bytes()
	}
	var inspect struct {
		ContextTokens int `json:"context_tokens"`
	}
	if err := json.Unmarshal(run("inspect"), &inspect); err != nil {
		t.Fatal(err)
	}
	var ledger struct {
		Totals struct {
			Cost   float64 `json:"cost_usd"`
			Priced bool    `json:"priced"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(run("inspect", "--ledger", "--json"), &ledger); err != nil {
		t.Fatal(err)
	}
	var preview struct {
		TokensBefore int `json:"tokens_before"`
		TokensAfter  int `json:"tokens_after"`
	}
	if err := json.Unmarshal(run("preview", "--json"), &preview); err != nil {
		t.Fatal(err)
	}

	if appLevel == 0 || appLevel != inspect.ContextTokens {
		t.Errorf("context level: app %d, CLI %d", appLevel, inspect.ContextTokens)
	}
	if !appKnown || !ledger.Totals.Priced || appCost == 0 ||
		math.Abs(appCost-ledger.Totals.Cost) > 1e-12 || math.Abs(chartCost-appCost) > 1e-12 {
		t.Errorf("cost: footer %v (known %v), chart %v, CLI %v (priced %v)", appCost, appKnown, chartCost, ledger.Totals.Cost, ledger.Totals.Priced)
	}
	if plan.TokensBefore != preview.TokensBefore || plan.TokensAfter != preview.TokensAfter {
		t.Errorf("preview totals: app %d → %d, CLI %d → %d", plan.TokensBefore, plan.TokensAfter, preview.TokensBefore, preview.TokensAfter)
	}
}

// The command line and the app used to disagree about the demo session's
// window (issue 12 #6): `tally inspect`, run while the app is open, reports
// the window the app's gauge shows.
func TestDemoWindowIsTheSameInTheAppAndOnTheCommandLine(t *testing.T) {
	h := openHarness(t, nil, true)
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
