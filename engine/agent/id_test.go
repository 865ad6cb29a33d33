package agent

import (
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// A generated ID that is already taken is drawn again instead of failing
// the creation.
func TestCreateDrawsAgainWhenTheGeneratedIDIsTaken(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("hi")), nil)
	draws := []string{"20261201-aaaaaaaa", "20261201-aaaaaaaa", "20261201-aaaaaaaa", "20261201-bbbbbbbb"}
	saved := newID
	newID = func(time.Time) string {
		id := draws[0]
		draws = draws[1:]
		return id
	}
	t.Cleanup(func() { newID = saved })
	first := h.session("")
	second := h.session("")
	if first.Snapshot().Meta.ID != "20261201-aaaaaaaa" || second.Snapshot().Meta.ID != "20261201-bbbbbbbb" {
		t.Fatalf("IDs %q and %q", first.Snapshot().Meta.ID, second.Snapshot().Meta.ID)
	}
	if _, err := Create(h.cfg, "20261201-aaaaaaaa", h.ws, ""); err == nil {
		t.Fatal("an ID given on purpose that is taken was replaced silently")
	}
}
