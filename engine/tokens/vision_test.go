package tokens

import "testing"

func TestVisionTable(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-4o":                      true,
		"gpt-4o-mini":                 true,
		"GPT-4.1-mini":                true,
		"gpt-5":                       true,
		"openai/gpt-5-codex":          true,
		"claude-sonnet-4":             true,
		"anthropic/claude-3.5-sonnet": true,
		"gemini-2.5-pro":              true,
		"qwen2.5-vl-72b-instruct":     true,
		"qwen3-vl-235b":               true,
		"llava:13b":                   true,
		"deepseek-chat":               false,
		"deepseek-reasoner":           false,
		"qwen3-coder-480b":            false,
		"qwen2.5-coder-32b":           false,
		"llama3.1:8b":                 false,
		"some-local-model":            false,
		"":                            false,
	} {
		if got := Vision(model); got != want {
			t.Errorf("Vision(%q) = %v; want %v", model, got, want)
		}
	}
}

func TestImageTokens(t *testing.T) {
	for _, c := range []struct{ w, h, want int }{
		{1024, 1024, 765},  // scaled to 768×768: 4 tiles
		{2048, 4096, 1105}, // fitted to 1024×2048, then 768×1536: 6 tiles
		{4096, 2048, 1105},
		{512, 512, 255},    // one tile
		{100, 30, 255},     // small images are not scaled up
		{513, 512, 425},    // two tiles
		{1920, 1080, 1105}, // 1365×768: 3×2 tiles
		{800, 600, 765},    // 800×600 stays: 2×2 tiles
		{1, 100000, 255 + 170*3},
		{0, 0, ImageUnknown},
		{-5, 10, ImageUnknown},
	} {
		if got := Image(c.w, c.h); got != c.want {
			t.Errorf("Image(%d, %d) = %d; want %d", c.w, c.h, got, c.want)
		}
	}
}
