package tokens

import "strings"

// UnknownWindow is the context window assumed for a model Tally does not
// know; the auto-compaction threshold for it is fixed separately.
const UnknownWindow = 128_000

// knownWindows maps a model-name prefix to its context window in tokens.
// The longest matching prefix wins.
var knownWindows = map[string]int{
	"deepseek-chat":     1_000_000,
	"deepseek-reasoner": 1_000_000,
	"deepseek-v4":       1_000_000,
	"deepseek-v3":       128_000,
	"gpt-4o":            128_000,
	"gpt-4.1":           1_000_000,
	"gpt-5":             400_000,
	"o3":                200_000,
	"o4-mini":           200_000,
	"qwen3":             32_768,
	"qwen3-coder":       256_000,
	"qwen3.5":           128_000,
	"qwen2.5-coder":     32_768,
	"llama3":            8_192,
	"claude":            200_000,
}

// Window returns the context window of model and whether it was known.
// Matching is case-insensitive on the longest known prefix, after any
// "provider/" qualifier.
func Window(model string) (int, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	best, n := "", 0
	for k, v := range knownWindows {
		if strings.HasPrefix(m, k) && len(k) > len(best) {
			best, n = k, v
		}
	}
	if best == "" {
		return UnknownWindow, false
	}
	return n, true
}
