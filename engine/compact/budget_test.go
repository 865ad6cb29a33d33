package compact

import "testing"

// TestBudgetByPrice: the price-aware level at the miss:hit ratios of real
// providers (DeepSeek V4 bills a miss at 5 to 12 hits, the cost tables use
// 30) in a 128K and a 1M window, for a session growing 330 and 700 tokens
// a request with 200 requests to go.
func TestBudgetByPrice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window int
		ratio  float64
		growth float64
		// lo and hi bound the level chosen.
		lo, hi int
	}{
		{"128K at 1:5", 128_000, 5, 330, 32_000, 63_333},
		{"128K at 1:12", 128_000, 12, 330, 32_000, 63_333},
		{"128K at 1:30", 128_000, 30, 330, 32_000, 63_333},
		{"128K at 1:30, fast growth", 128_000, 30, 700, 32_000, 63_333},
		{"1M at 1:5", 1_000_000, 5, 330, 32_000, 64_000},
		{"1M at 1:12", 1_000_000, 12, 330, 32_000, 64_000},
		{"1M at 1:30", 1_000_000, 30, 330, 32_000, 64_000},
		{"1M at 1:30, fast growth", 1_000_000, 30, 700, 32_000, 80_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, _ := Levels(tc.window, true, DefaultCycleAt)
			in := BudgetInput{Window: tc.window, Threshold: th, HitPrice: 0.01, MissPrice: 0.01 * tc.ratio,
				Level: 20_000, Base: 20_000, Growth: tc.growth, Requests: 200}
			b := Budget(in)
			if b < tc.lo || b > tc.hi {
				t.Errorf("Budget = %d; want between %d and %d", b, tc.lo, tc.hi)
			}
			if b < BudgetFloor(tc.window, th) || b > th {
				t.Errorf("Budget = %d is outside [%d, %d]", b, BudgetFloor(tc.window, th), th)
			}
			got, old := ForecastCost(in, b), ForecastCost(in, th)
			if got.Cost > old.Cost {
				t.Errorf("keeping under %d costs %.0f, more than the threshold's %.0f", b, got.Cost, old.Cost)
			}
			// No level in range is more than the tolerance cheaper.
			for l := BudgetFloor(tc.window, th); l <= th; l += 1_000 {
				if c := ForecastCost(in, l).Cost; c < got.Cost*(1-budgetTolerance) {
					t.Errorf("keeping under %d costs %.0f, less than the chosen %d's %.0f", l, c, b, got.Cost)
				}
			}
			t.Logf("keep under %d: %.0f hit-units in %d compactions; the threshold %d: %.0f in %d",
				b, got.Cost, got.Compactions, th, old.Cost, old.Compactions)
		})
	}
}

// TestBudgetFallsBack: without a growth, a threshold or the requests to
// make it pay, the level stays the threshold; unknown prices are a miss at
// defaultMissHitRatio hits.
func TestBudgetFallsBack(t *testing.T) {
	th, _ := Levels(1_000_000, true, DefaultCycleAt)
	in := BudgetInput{Window: 1_000_000, Threshold: th, Level: 20_000, Base: 20_000, Growth: 330, Requests: 200}
	known := in
	known.HitPrice, known.MissPrice = 0.01, 0.01*defaultMissHitRatio
	if a, b := Budget(in), Budget(known); a != b {
		t.Errorf("unknown prices give %d, a miss at %.0f hits gives %d", a, defaultMissHitRatio, b)
	}
	if a, b := ForecastCost(in, 100_000), ForecastCost(known, 100_000); a != b {
		t.Errorf("unknown prices forecast %+v, a miss at %.0f hits %+v", a, defaultMissHitRatio, b)
	}
	for name, mod := range map[string]func(*BudgetInput){
		"unknown growth":          func(in *BudgetInput) { in.Growth = 0 },
		"a short session":         func(in *BudgetInput) { in.Requests = 20 },
		"never reaches the floor": func(in *BudgetInput) { in.Growth = 50 },
	} {
		c := in
		mod(&c)
		if b := Budget(c); b != th {
			t.Errorf("%s: Budget = %d; want the threshold %d", name, b, th)
		}
	}
	if b := Budget(BudgetInput{Window: 1_000_000, Growth: 330}); b != 0 {
		t.Errorf("an unknown threshold gives %d; want 0", b)
	}
}

// TestBudgetFloor: 40 % of the window, at most 32K, never over the
// threshold.
func TestBudgetFloor(t *testing.T) {
	for _, tc := range []struct{ window, threshold, want int }{
		{32_000, 12_800, 12_800},
		{64_000, 31_333, 25_600},
		{128_000, 63_333, 32_000},
		{200_000, 167_000, 32_000},
		{1_000_000, 650_000, 32_000},
		{1_000_000, 30_000, 30_000},
	} {
		if g := BudgetFloor(tc.window, tc.threshold); g != tc.want {
			t.Errorf("BudgetFloor(%d, %d) = %d; want %d", tc.window, tc.threshold, g, tc.want)
		}
	}
}

// TestForecastCost counts the requests and compactions of a forecast and
// prices a compaction by the summary request the window allows.
func TestForecastCost(t *testing.T) {
	in := BudgetInput{Window: 128_000, Threshold: 63_333, HitPrice: 0.01, MissPrice: 0.1, Level: 10_000, Base: 10_000, Growth: 1_000, Requests: 100}
	c := ForecastCost(in, 30_000)
	if c.Requests != 100 || c.Compactions != 4 {
		t.Errorf("forecast %+v; want 100 requests and 4 compactions", c)
	}
	if never := ForecastCost(in, 0); never.Compactions != 0 {
		t.Errorf("a level of 0 compacted %d times", never.Compactions)
	}
	// With no growth, no compaction: each request costs the level.
	flat := ForecastCost(BudgetInput{Level: 50_000, Requests: 10}, 100_000)
	if flat.Cost != 500_000 || flat.Requests != 10 {
		t.Errorf("flat forecast %+v; want 500,000 hit-units over 10 requests", flat)
	}
	if d := flat.Dollars(0.02); d != 0.01 {
		t.Errorf("500,000 hit tokens at $0.02 per million = $%v; want $0.01", d)
	}
	// A replay (1M window) is cheaper than a flattened summary request.
	big := in
	big.Window = 1_000_000
	if a, b := ForecastCost(big, 30_000).Cost, c.Cost; a >= b {
		t.Errorf("a replayed summary costs %.0f, a flattened one %.0f", a, b)
	}
}
