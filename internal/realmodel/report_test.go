package realmodel

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/ledger"
)

func TestTables(t *testing.T) {
	results := []TaskResult{
		{Task: "a", Kind: "create", Arm: "default", Pass: true, Requests: 2, Prompt: 100, Evaluated: 60, Cached: 40, End: "done"},
		{Task: "b", Kind: "answer", Arm: "default", Why: "the answer | says nothing", Requests: 8, End: "step_limit", Blocked: 1},
		{Task: "a", Kind: "create", Arm: "bare", Requests: 1, End: "done"},
	}
	s := Summarize("default", results)
	if s.Tasks != 2 || s.Passed != 1 || s.Requests != 10 || s.ByKind["create"] != [2]int{1, 1} || s.Ends["step_limit"] != 1 || s.Blocked != 1 {
		t.Errorf("summary %+v", s)
	}
	table := EvalTable([]ArmSummary{s, Summarize("bare", results)})
	for _, want := range []string{"| default | 1/2 (50 %) | 1/1 | 0/0 | 0/0 | 0/1 | 0/0 | 10 | 100 | 60 | 40 |", "1 done, 1 step limit", "| bare | 0/1 (0 %) |"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	tasks := TaskTable(results, []string{"default", "bare"})
	if !strings.Contains(tasks, "| b | answer | fail (8 req): the answer \\| says nothing | — |") {
		t.Errorf("task table:\n%s", tasks)
	}
	row := ledger.Row{PromptTokens: 900, CacheHitTokens: 850, CacheMissTokens: 50, Rebuild: "compaction"}
	cache := CacheTable([]CacheRow{{Label: "turn 1", Messages: 5, Shared: 3, Prev: 3, Row: &row,
		Exchange: Exchange{Usage: &Usage{PromptTokens: 900, CompletionTokens: 7}, Timings: &Timings{CacheN: 850, PromptN: 50}}}})
	if !strings.Contains(cache, "| 1 | turn 1 | 5 (3 of 3) | 900 | 850 | 50 | 7 | 900 | 850 | 50 | after compaction |") {
		t.Errorf("cache table:\n%s", cache)
	}
}
