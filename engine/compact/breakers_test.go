package compact

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFailureBreaker(t *testing.T) {
	now := t0
	var b Breakers
	for i := range FailureLimit - 1 {
		b.Failed(now)
		if ok, _ := b.Allow(now, false); !ok {
			t.Fatalf("closed breaker refused after %d failures", i+1)
		}
	}
	t.Run("opens at the third failure", func(t *testing.T) {
		b.Failed(now)
		ok, why := b.Allow(now.Add(time.Minute), false)
		if ok || !strings.Contains(why, "failed 3 times") || !strings.Contains(why, "4 more minutes") || !strings.Contains(why, "/compact") {
			t.Errorf("Allow = %v, %q", ok, why)
		}
		if got := b.Alerts(); len(got) != 1 || got[0] != "compaction: failure breaker open after 3 failures; retrying after 5 min" {
			t.Errorf("alerts = %q", got)
		}
	})
	t.Run("manual compaction bypasses", func(t *testing.T) {
		if ok, why := b.Allow(now, true); !ok || why != "" {
			t.Errorf("manual refused: %q", why)
		}
	})
	t.Run("half-open probe after five minutes", func(t *testing.T) {
		if ok, why := b.Allow(now.Add(FailureCooldown), false); !ok || !strings.Contains(why, "once more") {
			t.Errorf("probe refused: %q", why)
		}
	})
	t.Run("failed probe restarts the cooldown", func(t *testing.T) {
		later := now.Add(FailureCooldown)
		b.Failed(later)
		if ok, _ := b.Allow(later.Add(time.Minute), false); ok {
			t.Error("allowed right after a failed probe")
		}
	})
	t.Run("success closes it", func(t *testing.T) {
		b.Succeeded()
		if ok, _ := b.Allow(now, false); !ok || b.Open() || len(b.Alerts()) != 0 {
			t.Error("still open after success")
		}
	})
}

func TestRapidRefill(t *testing.T) {
	cycle := func(b *Breakers, rounds int) (bool, string) {
		b.Compacted()
		for range rounds {
			b.ToolRound()
		}
		return b.AtThreshold()
	}
	cases := []struct {
		name   string
		rounds []int
		want   bool
	}{
		{"three quick refills pause", []int{0, 1, 2}, true},
		{"two quick refills do not", []int{1, 2}, false},
		{"a slow refill breaks the streak", []int{1, 2, 3, 1}, false},
		{"streak restarts after a slow one", []int{1, 5, 0, 1, 2}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b Breakers
			var paused bool
			var msg string
			for _, r := range c.rounds {
				paused, msg = cycle(&b, r)
			}
			if paused != c.want {
				t.Fatalf("paused = %v; want %v (state %+v)", paused, c.want, b)
			}
			if paused {
				if msg != RefillMessage || !strings.Contains(msg, "offset and limit") {
					t.Errorf("message = %q", msg)
				}
				if ok, why := b.Allow(t0, false); ok || why != RefillMessage {
					t.Error("automatic compaction allowed while paused")
				}
				if ok, _ := b.Allow(t0, true); !ok {
					t.Error("manual compaction refused while paused")
				}
				if a := b.Alerts(); len(a) != 1 || !strings.Contains(a[0], "paused") {
					t.Errorf("alerts = %q", a)
				}
				b.NewTurn()
				if p, _ := b.AtThreshold(); p {
					t.Error("still paused in a new turn")
				}
			}
		})
	}
	t.Run("repeated calls without a compaction count once", func(t *testing.T) {
		var b Breakers
		cycle(&b, 0)
		cycle(&b, 0)
		for range 5 {
			if p, _ := b.AtThreshold(); p {
				t.Fatal("paused by repeated checks")
			}
		}
	})
	t.Run("message names the limit", func(t *testing.T) {
		if !strings.Contains(RefillMessage, strconv.Itoa(RefillLimit)+" times") {
			t.Error("RefillMessage disagrees with RefillLimit")
		}
	})
}

func TestBreakersPersistAndReset(t *testing.T) {
	var b Breakers
	for range 3 {
		b.Failed(t0)
	}
	b.Compacted()
	b.Failed(t0)
	b.ToolRound()
	data, err := json.Marshal(&b)
	if err != nil {
		t.Fatal(err)
	}
	var back Breakers
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back != b {
		t.Errorf("round trip: %+v != %+v", back, b)
	}
	back.Reset()
	if back != (Breakers{}) {
		t.Errorf("Reset left %+v", back)
	}
	t.Run("nil receiver", func(t *testing.T) {
		var n *Breakers
		n.Failed(t0)
		n.Succeeded()
		n.Compacted()
		n.ToolRound()
		n.NewTurn()
		n.Reset()
		if ok, _ := n.Allow(t0, false); !ok {
			t.Error("nil breakers refused")
		}
		if p, _ := n.AtThreshold(); p || n.Alerts() != nil || n.Open() {
			t.Error("nil breakers reported a condition")
		}
	})
}
