package acp

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestEffortIsAConfigOption: the session's reasoning effort is a
// thought_level option offering every level, "default" at first; setting
// it to high sends the level in the next request's body (and nothing of
// it before), and a level Tally does not know is refused.
func TestEffortIsAConfigOption(t *testing.T) {
	f := newFixtureWith(t, llmtest.Sequence(llmtest.Text("first"), llmtest.Text("second")))
	h := f.connect(t, "")
	created := f.newSession(t, h)
	id := created.SessionId
	effort := option(t, created.ConfigOptions, configEffort)
	if effort.Select == nil || effort.Select.CurrentValue != "default" || *effort.Select.Category != acp.SessionConfigOptionCategoryThoughtLevel {
		t.Fatalf("the effort option is %+v", effort)
	}
	var values []string
	for _, v := range *effort.Select.Options.Ungrouped {
		values = append(values, string(v.Value))
	}
	if got := strings.Join(values, " "); got != "default off low medium high max" {
		t.Errorf("the effort option offers %q", got)
	}
	prompt(t, h, id, "hello")
	resp, err := setOption(h, id, configEffort, "high")
	if err != nil {
		t.Fatal(err)
	}
	if got := option(t, resp.ConfigOptions, configEffort).Select.CurrentValue; got != "high" {
		t.Errorf("after setting it the effort option says %q", got)
	}
	prompt(t, h, id, "think harder")
	reqs := f.model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	before, after := string(reqs[len(reqs)-2].Body), string(reqs[len(reqs)-1].Body)
	if strings.Contains(before, `"reasoning_effort"`) || !strings.Contains(after, `"reasoning_effort":"high"`) {
		t.Errorf("the effort did not reach the next request alone:\nbefore %s\nafter %s", before, after)
	}
	if _, err := setOption(h, id, configEffort, "extreme"); err == nil {
		t.Error("an unknown effort level was accepted")
	}
}
