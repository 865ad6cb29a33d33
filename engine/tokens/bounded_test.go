package tokens

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCountOrdinaryTextUnchanged pins the counts of ordinary text to the
// values the tokenizer gave before long runs were cut, so bounding the cost
// never changes a normal count.
func TestCountOrdinaryTextUnchanged(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		want int
	}{
		{"prose", fixtureProse, 83},
		{"code", fixtureCode, 112},
		{"json", fixtureJSON, 47},
		{"cjk", fixtureCJK, 32},
		{"markdown", fixtureMD, 64},
		{"mix", fixtureMix, 13522},
	} {
		if g := Count(c.text); g != c.want {
			t.Errorf("Count(%s) = %d; want %d", c.name, g, c.want)
		}
	}
}

// repetitiveShapes are 1 MiB inputs whose pre-tokenized pieces are huge
// without cutting: the inputs that made Count take seconds.
func repetitiveShapes() []struct{ name, text string } {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, n*3/4)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return []struct{ name, text string }{
		{"a", strings.Repeat("a", n)},
		{"ab_space", strings.Repeat("ab ", n/3)},
		{"base64", base64.StdEncoding.EncodeToString(raw)},
		{"emoji", strings.Repeat("😀", n/4)},
		{"spaces", strings.Repeat(" ", n)},
		{"equals", strings.Repeat("=", n)},
		{"cjk", strings.Repeat("中", n/3)},
	}
}

// TestPartsBoundRuns checks what Count hands to the tokenizer for every
// repetitive shape: the parts add up to the input, split no rune, and none
// holds a run of one character class longer than maxRun, which is what
// bounds the BPE merge.
func TestPartsBoundRuns(t *testing.T) {
	for _, sh := range repetitiveShapes() {
		var b strings.Builder
		longest := 0
		for p := range parts(sh.text) {
			if !utf8.ValidString(p) {
				t.Fatalf("%s: a part splits a rune", sh.name)
			}
			longest = max(longest, longestRun(p))
			b.WriteString(p)
		}
		if b.String() != sh.text {
			t.Fatalf("%s: the parts do not add up to the input", sh.name)
		}
		if longest > maxRun {
			t.Errorf("%s: a part holds a %d-byte run of one class; want at most %d", sh.name, longest, maxRun)
		}
		if n := Count(sh.text); n <= 0 || n > len(sh.text) {
			t.Errorf("%s: Count = %d for %d bytes", sh.name, n, len(sh.text))
		}
	}
}

// longestRun is the longest run of one character class in s, in bytes.
func longestRun(s string) int {
	best, start, cls := 0, 0, -1
	for i := 0; i < len(s); {
		c, size := classAt(s, i)
		if c != cls {
			start, cls = i, c
		}
		i += size
		best = max(best, i-start)
	}
	return best
}

// BenchmarkCountRepetitive1MB measures Count on 1 MiB inputs whose
// pre-tokenized pieces are huge.
func BenchmarkCountRepetitive1MB(b *testing.B) {
	Count("warm up")
	for _, sh := range repetitiveShapes() {
		b.Run(sh.name, func(b *testing.B) {
			b.SetBytes(int64(len(sh.text)))
			for b.Loop() {
				Count(sh.text)
			}
		})
	}
}

// BenchmarkCountProse1MB is the reference: 1 MiB of ordinary text.
func BenchmarkCountProse1MB(b *testing.B) {
	Count("warm up")
	text := strings.Repeat(fixtureProse+fixtureCode, (1<<20)/len(fixtureProse+fixtureCode))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Count(text)
	}
}
