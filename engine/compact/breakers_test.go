package compact

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFailureBreaker(t *testing.T) {
	now := t0
	var b Breakers
	for i := range failureLimit - 1 {
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
		if ok, why := b.Allow(now.Add(failureCooldown), false); !ok || !strings.Contains(why, "once more") {
			t.Errorf("probe refused: %q", why)
		}
	})
	t.Run("failed probe restarts the cooldown", func(t *testing.T) {
		later := now.Add(failureCooldown)
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
				if msg != refillMessage || !strings.Contains(msg, "offset and limit") {
					t.Errorf("message = %q", msg)
				}
				if ok, why := b.Allow(t0, false); ok || why != refillMessage {
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
		if !strings.Contains(refillMessage, strconv.Itoa(refillLimit)+" times") {
			t.Error("refillMessage disagrees with refillLimit")
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
	b.Busted(7)
	b.Growth.Mark(12_000, 9_000, 4)
	data, err := json.Marshal(&b)
	if err != nil {
		t.Fatal(err)
	}
	var back Breakers
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, b) {
		t.Errorf("round trip: %+v != %+v", back, b)
	}
	back.Reset()
	if !reflect.DeepEqual(back, Breakers{}) {
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
		if p, _ := n.Busted(1); p || n.BustsIn(1) != 0 || n.AutoPaused() {
			t.Error("nil breakers counted a bust")
		}
		if ok, _ := n.Allow(t0, false); !ok {
			t.Error("nil breakers refused")
		}
		if p, _ := n.AtThreshold(); p || n.Alerts() != nil || n.Open() {
			t.Error("nil breakers reported a condition")
		}
	})
}

func TestThrashBreaker(t *testing.T) {
	t.Run("the third cache-busting rebuild of a turn pauses", func(t *testing.T) {
		var b Breakers
		for i := range ThrashTurnLimit {
			if p, _ := b.Busted(10 + i); p {
				t.Fatalf("paused after %d busts", i+1)
			}
			if ok, _ := b.Allow(t0, false); !ok {
				t.Fatalf("refused after %d busts", i+1)
			}
		}
		p, msg := b.Busted(20)
		if !p || msg != thrashMessage || !b.AutoPaused() {
			t.Fatalf("Busted = %v, %q; paused %v", p, msg, b.AutoPaused())
		}
		if ok, why := b.Allow(t0, false); ok || why != thrashMessage {
			t.Errorf("Allow = %v, %q", ok, why)
		}
		if ok, _ := b.Allow(t0, true); !ok {
			t.Error("a manual compaction was refused")
		}
		if a := b.Alerts(); len(a) != 1 || !strings.Contains(a[0], "3 cache-busting rewrites this turn, 3 in the last 100 requests") {
			t.Errorf("alerts = %q", a)
		}
		if p, _ := b.Busted(21); p {
			t.Error("a fourth bust reported the pause again")
		}
	})
	t.Run("a new turn lifts the pause and keeps the window", func(t *testing.T) {
		var b Breakers
		for i := range ThrashTurnLimit + 1 {
			b.Busted(i)
		}
		b.NewTurn()
		if b.AutoPaused() || b.TurnBusts != 0 || b.BustsIn(5) != ThrashTurnLimit+1 {
			t.Errorf("after a new turn: %+v", b)
		}
	})
	t.Run("busts older than the window are forgotten", func(t *testing.T) {
		var b Breakers
		b.Busted(1)
		b.Busted(50)
		b.NewTurn()
		b.Busted(101 + 1)
		if got := b.BustsIn(102); got != 2 || len(b.Busts) != 2 {
			t.Errorf("BustsIn = %d, kept %v; want 2 (requests 50 and 102)", got, b.Busts)
		}
		if got := b.BustsIn(151); got != 1 {
			t.Errorf("BustsIn(151) = %d; want 1", got)
		}
	})
	t.Run("busts of an earlier turn do not count for this one", func(t *testing.T) {
		var b Breakers
		b.Busted(1)
		b.Busted(2)
		b.NewTurn()
		b.Busted(3)
		b.Busted(4)
		if b.AutoPaused() {
			t.Error("two busts in this turn and two in the last paused")
		}
	})
}
