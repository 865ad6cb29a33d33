package compact

import "testing"

func TestThreshold(t *testing.T) {
	cases := []struct {
		name   string
		window int
		known  bool
		want   int
	}{
		{"1M window", 1_000_000, true, 967_000},
		{"200K is not small", 200_000, true, 167_000},
		{"128K takes the 2/3 haircut", 128_000, true, 63_333},
		{"32K floors at 40 %", 32_000, true, 12_800},
		{"16K floors at 40 %", 16_000, true, 6_400},
		{"unknown model", 128_000, false, 95_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if g := Threshold(c.window, c.known); g != c.want {
				t.Errorf("Threshold(%d, %v) = %d; want %d", c.window, c.known, g, c.want)
			}
		})
	}
	if g := CycleThreshold(1_000_000, DefaultCycleAt); g != 750_000 {
		t.Errorf("cycle at 75%% of 1M = %d", g)
	}
	if g := CycleThreshold(1_000_000, 0); g != 0 {
		t.Errorf("disabled cycle = %d", g)
	}
}

func TestLevelsPutCompactionBeforeTheCycle(t *testing.T) {
	for _, w := range []int{32_000, 64_000, 128_000, 200_000, 256_000, 1_000_000, 2_000_000} {
		for _, known := range []bool{true, false} {
			c, cy := Levels(w, known, DefaultCycleAt)
			if c >= cy {
				t.Errorf("window %d (known %v): compaction at %d does not come before the cycle at %d", w, known, c, cy)
			}
			if c > Threshold(w, known) || (known && c < int(float64(w)*minFraction)) {
				t.Errorf("window %d: compaction at %d is outside [%d, Threshold %d]", w, c, int(float64(w)*minFraction), Threshold(w, known))
			}
		}
	}
	if c, cy := Levels(1_000_000, true, DefaultCycleAt); c != 650_000 || cy != 750_000 {
		t.Errorf("1M window: compaction %d, cycle %d; want 650000 and 750000", c, cy)
	}
	if c, _ := Levels(128_000, true, DefaultCycleAt); c != Threshold(128_000, true) {
		t.Errorf("128K window: compaction moved to %d although it already came first", c)
	}
	if c, cy := Levels(1_000_000, true, -1); cy != 0 || c != Threshold(1_000_000, true) {
		t.Errorf("cycles off: compaction %d, cycle %d", c, cy)
	}
}

func TestAbovePrefix(t *testing.T) {
	for _, c := range []struct {
		name                               string
		compactAt, cycleAt, window, prefix int
		want                               int
	}{
		{"8K window, prefix over the 40 % floor", 3_200, 6_000, 8_000, 3_800, 5_800},
		{"8K window, cycles off", 3_200, 0, 8_000, 3_800, 5_800},
		{"prefix too big: under the cycle", 3_200, 6_000, 8_000, 5_000, 5_999},
		{"prefix too big, cycles off: 90 % of the window", 3_200, 0, 8_000, 6_500, 7_200},
		{"128K window: unchanged", 63_333, 96_000, 128_000, 3_000, 63_333},
		{"cycle first, as the user set it: unchanged", 3_200, 2_000, 8_000, 3_800, 3_200},
	} {
		if got := AbovePrefix(c.compactAt, c.cycleAt, c.window, c.prefix); got != c.want {
			t.Errorf("%s: AbovePrefix(%d, %d, %d, %d) = %d, want %d", c.name, c.compactAt, c.cycleAt, c.window, c.prefix, got, c.want)
		}
	}
}
