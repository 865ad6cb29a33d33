package tokens

import (
	"strings"
	"testing"
)

func TestCountKnownText(t *testing.T) {
	if g := Count(""); g != 0 {
		t.Errorf("Count(\"\") = %d; want 0", g)
	}
	if err := Err(); err != nil {
		t.Fatalf("embedded encoding failed to load: %v", err)
	}
	// "hello world" is two tokens in every OpenAI BPE encoding.
	if g, w := Count("hello world"), 2; g != w {
		t.Errorf("Count(hello world) = %d; want %d", g, w)
	}
}

func TestCountChunkingIsCloseToWhole(t *testing.T) {
	line := "func add(a, b int) int { return a + b }\n"
	text := strings.Repeat(line, 2000) // ~80 KB, several chunks
	per := Count(line)
	if g, w := Count(text), per*2000; g != w {
		t.Errorf("chunked count = %d; want %d", g, w)
	}
	noNewline := strings.Repeat("é", 20000) // multi-byte runes, no newline
	if Count(noNewline) == 0 {
		t.Error("count of a long line without newlines is 0")
	}
}

func TestAnchor(t *testing.T) {
	counts := []int{10, 20, 30, 40}
	at := func(i int) int { return counts[i] }
	var a Anchor
	if g, exact := a.Estimate(at, 4, 100, 100, 5); g != 205 || exact {
		t.Errorf("unanchored estimate = %d, %v; want 205, false", g, exact)
	}
	a.Set(500, 2, 130)
	if g, exact := a.Estimate(at, 2, 30, 100, 0); g != 500 || !exact {
		t.Errorf("estimate at anchor = %d, %v; want 500, true", g, exact)
	}
	if g, _ := a.Estimate(at, 4, 100, 100, 5); g != 575 {
		t.Errorf("estimate after two appends = %d; want 575", g)
	}
	a.Invalidate()
	if a.Valid() {
		t.Error("anchor still valid after Invalidate")
	}
	a.Set(500, 9, 0) // anchored beyond the log (log was rebuilt shorter): fall back
	if g, _ := a.Estimate(at, 4, 100, 100, 0); g != 200 {
		t.Errorf("estimate with stale anchor = %d; want 200", g)
	}
}

func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Count(text)
	}
}

func TestWindow(t *testing.T) {
	cases := []struct {
		model string
		want  int
		known bool
	}{
		{"deepseek-chat", 1_000_000, true},
		{"DeepSeek-V4-Flash", 1_000_000, true},
		{"gpt-4o-mini", 128_000, true},
		{"Qwen/Qwen3-8B", 32_768, true},
		{"qwen3-coder-plus", 256_000, true},
		{"my-local-model", UnknownWindow, false},
	}
	for _, c := range cases {
		g, known := Window(c.model)
		if g != c.want || known != c.known {
			t.Errorf("Window(%q) = %d, %v; want %d, %v", c.model, g, known, c.want, c.known)
		}
	}
}
