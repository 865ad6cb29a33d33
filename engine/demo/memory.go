package demo

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/memory"
)

// proposalMarker is the first line of the memory proposal's instruction,
// which the last message of a proposal request holds.
var proposalMarker, _, _ = strings.Cut(strings.TrimSpace(memory.Instruction), "\n")

// proposal answers a memory proposal request with what the demo's stories
// taught, each entry from the turn that taught it: how the tests run and
// the bug that was fixed (the fix story), the package's rules (the tour).
// A session that told neither story gets no entry.
func proposal(req Request) string {
	last := req.Messages[len(req.Messages)-1].Content
	_, listed, _ := strings.Cut(last, "The user's turns:\n")
	turn := map[string]int{}
	for line := range strings.SplitSeq(listed, "\n") {
		n, text, ok := strings.Cut(line, ": ")
		k, err := strconv.Atoi(n)
		if !ok || err != nil {
			continue
		}
		// The list clips a long turn with an ellipsis.
		text = strings.TrimSuffix(strings.TrimSpace(text), "…")
		for _, p := range []string{Prompt, ExplorePrompt} {
			if len(text) >= 20 && (strings.Contains(text, p) || strings.HasPrefix(p, text)) && turn[p] == 0 {
				turn[p] = k
			}
		}
	}
	type entry struct {
		Kind   string `json:"kind"`
		Text   string `json:"text"`
		Source int    `json:"source"`
	}
	entries := []entry{}
	if n := turn[Prompt]; n > 0 {
		if readTests(req.Messages).state == done {
			entries = append(entries, entry{"build", "Run the tests with `go test ./...` from the repository root; calc/calc_test.go covers the calc package.", n})
		}
		entries = append(entries, entry{"pitfall", "calc.Add once returned a - b: after changing an arithmetic helper, run its table test before trusting it.", n})
	}
	if n := turn[ExplorePrompt]; n > 0 {
		entries = append(entries, entry{"convention", "The calc package never panics: overflow is checked explicitly, rounding is banker's and tests are table-driven (docs/design.md).", n})
	}
	b, _ := json.Marshal(map[string]any{"entries": entries})
	return string(b)
}
