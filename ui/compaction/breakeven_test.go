package compaction

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
)

// The preview said "Breaks even after 204.4 later requests": a request is
// whole, so the count is the next whole one, with the thousands separator
// every other count has.
func TestBreakEvenIsAWholeNumberOfRequests(t *testing.T) {
	for _, c := range []struct {
		at   float64
		want string
	}{{204.4, "Breaks even after 205 later requests."}, {0.3, "Breaks even after 1 later request."}, {1320, "Breaks even after 1,320 later requests."}} {
		got := cacheCostText(compact.CacheCost{BreakEven: c.at, SavedPerRequest: 10}, ledger.Price{CacheHit: 0.1, CacheMiss: 1}, true)
		if !strings.Contains(got, c.want) {
			t.Errorf("break-even %v: %q, want %q", c.at, got, c.want)
		}
	}
}
