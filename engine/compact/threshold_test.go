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
