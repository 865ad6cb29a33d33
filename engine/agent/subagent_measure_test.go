package agent

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/storage"
)

// measureFollowUps are the turns after the exploration: every one of them
// re-sends the parent's context, which is where delegation pays.
var measureFollowUps = []string{"Which file should change?", "What would the test check?", "Summarise the plan in one line."}

const measureReport = "calc.Add subtracts instead of adding (calc/calc.go:7); calc/calc_test.go covers Add and Mul; squares come from the table in calc/table.go."

// measureScript explores the demo workspace by reading every file, one per
// step, either itself (inline) or through one explore sub-agent, and then
// answers the follow-ups in one line each.
func measureScript(files []string, delegate bool) llmtest.ScriptFunc {
	explore := func(msgs []llmtest.Message) llmtest.Reply {
		if n := toolResults(msgs); n < len(files) {
			args, _ := json.Marshal(map[string]string{"path": files[n]})
			return llmtest.Call("read_file", string(args))
		}
		return llmtest.Text(measureReport)
	}
	return func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			return explore(r.Messages)
		}
		if !strings.Contains(r.LastHuman(), "Explore the project") {
			return llmtest.Text("Answer: the change goes in calc/calc.go and the test checks Add(2, 3) == 5.")
		}
		if !delegate {
			return explore(r.Messages[1:])
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("explore calc", "Read the project's files and report the bug in Add and how it is tested.", "")}}
		}
		return llmtest.Text(measureReport)
	}
}

// measurement is what one way of exploring cost.
type measurement struct {
	contextTokens int
	totals        ledger.Totals
}

func measure(t *testing.T, delegate bool) measurement {
	t.Helper()
	dir := t.TempDir()
	if err := demo.NewWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	h := newHarness(t, measureScript(files, delegate), nil)
	if err := demo.NewWorkspace(h.ws); err != nil {
		t.Fatal(err)
	}
	s := h.session("m")
	for _, text := range append([]string{"Explore the project: find the bug in Add and how it is tested."}, measureFollowUps...) {
		if res, err := s.Run(context.Background(), text); err != nil || res.Reason != step.ReasonDone {
			t.Fatalf("%q: %+v, %v", text, res, err)
		}
	}
	h.noInvalid()
	recs, _ := h.st.Records(storage.KindLedger, "m")
	var rows []ledger.Row
	for _, r := range recs {
		var row ledger.Row
		json.Unmarshal(r.Data, &row)
		rows = append(rows, row)
	}
	level := s.Snapshot().Level
	price := ledger.Price{CacheHit: 0.028, CacheMiss: 0.28, Completion: 0.42} // deepseek-chat, config.DefaultPrices
	return measurement{level, ledger.Sum(rows, ledger.OnePrice(price, true))}
}

// TestMeasureDelegation is the README's inline-versus-delegated
// measurement: the same exploration of the demo project done by the
// session itself and by one explore sub-agent, followed by the same three
// follow-up turns. Run it with -v to see the numbers.
func TestMeasureDelegation(t *testing.T) {
	inline, delegated := measure(t, false), measure(t, true)
	for _, m := range []struct {
		name string
		m    measurement
	}{{"inline", inline}, {"delegated", delegated}} {
		t.Logf("%-9s parent context %5d tokens · %2d requests · prompt %6d tokens (cache hit %4.1f%%) · cost $%.6f",
			m.name, m.m.contextTokens, m.m.totals.Requests, m.m.totals.Prompt, 100*m.m.totals.HitRatio, m.m.totals.Cost)
	}
	if delegated.contextTokens >= inline.contextTokens {
		t.Errorf("delegating left the parent's context at %d tokens, inline %d; it should be smaller", delegated.contextTokens, inline.contextTokens)
	}
}
