package llmtest

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPromptCacheLookupMatchesAFullScan checks the indexed lookup against
// the longest common prefix with every prompt seen, on prompts that share
// prefixes of every length (inside a block, on a block's edge, shorter
// than a block).
func TestPromptCacheLookupMatchesAFullScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := make([]string, 700)
	for i := range base {
		base[i] = fmt.Sprint("t", i)
	}
	var c promptCache
	var seen [][]string
	for i := range 300 {
		cut := r.IntN(len(base))
		if i%7 == 0 {
			cut = indexBlock * r.IntN(len(base)/indexBlock)
		}
		p := append(append([]string{}, base[:cut]...), fmt.Sprint("x", i), fmt.Sprint("y", r.IntN(3)))
		for range r.IntN(100) {
			p = append(p, fmt.Sprint("z", r.IntN(2)))
		}
		want := 0
		for _, s := range seen {
			want = max(want, commonPrefix(p, s))
		}
		if got := c.lookup(p); got != want {
			t.Fatalf("prompt %d (%d tokens, cut %d): lookup %d, full scan %d", i, len(p), cut, got, want)
		}
		if r.IntN(2) == 0 {
			c.add(p)
			seen = append(seen, p)
		}
	}
}
