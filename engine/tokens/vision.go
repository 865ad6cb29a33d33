package tokens

import "strings"

// visionModels maps a model-name prefix to whether the model accepts
// images in its messages (image_url content parts). The longest matching
// prefix wins, as for the context windows, so "qwen2.5-vl" can say yes
// where "qwen2.5" says no.
var visionModels = map[string]bool{
	"gpt-4o":            true,
	"gpt-4.1":           true,
	"gpt-4.5":           true,
	"gpt-5":             true,
	"o3":                true,
	"o4-mini":           true,
	"chatgpt-4o":        true,
	"claude":            true,
	"gemini":            true,
	"gemma3":            true,
	"gemma-3":           true,
	"llava":             true,
	"bakllava":          true,
	"pixtral":           true,
	"qwen-vl":           true,
	"qwen2-vl":          true,
	"qwen2.5-vl":        true,
	"qwen3-vl":          true,
	"qwen3.5":           true,
	"qvq":               true,
	"llama3.2-vision":   true,
	"llama-3.2-vision":  true,
	"llama-4":           true,
	"minicpm-v":         true,
	"moondream":         true,
	"grok-2-vision":     true,
	"grok-4":            true,
	"mistral-small3.1":  true,
	"mistral-medium":    true,
	"deepseek-chat":     false,
	"deepseek-reasoner": false,
	"deepseek-v3":       false,
	"deepseek-v4":       false,
	"gpt-3.5":           false,
	"qwen3-coder":       false,
	"qwen2.5-coder":     false,
	"llama3":            false,
}

// Vision reports whether model is known to accept images, by the same
// matching as Window: case-insensitive on the longest known prefix, after
// any "provider/" qualifier. A model Tally does not know is taken not to,
// so an image is never sent to a model that would reject the request; the
// user can say otherwise in Settings.
func Vision(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	best, yes := "", false
	for k, v := range visionModels {
		if strings.HasPrefix(m, k) && len(k) > len(best) {
			best, yes = k, v
		}
	}
	return yes
}

// Image token estimate, after OpenAI's rule for image inputs at high
// detail: the image is fitted within ImageFit×ImageFit, then scaled down
// until its short side is at most ImageShortSide, and costs ImageBase plus
// ImagePerTile for each ImageTile×ImageTile tile it covers.
const (
	ImageFit       = 2048
	ImageShortSide = 768
	ImageTile      = 512
	ImageBase      = 85
	ImagePerTile   = 170
	// ImageUnknown is the estimate for an image whose size is not known:
	// that of a 1024×1024 image.
	ImageUnknown = ImageBase + 4*ImagePerTile
)

// Image returns the estimated prompt tokens of an image of width×height
// pixels (see the constants above). It never returns less than ImageBase,
// and an unknown or nonsensical size (zero or negative) is ImageUnknown.
// The provider's usage corrects the estimate after the request, as for
// text.
func Image(width, height int) int {
	if width <= 0 || height <= 0 {
		return ImageUnknown
	}
	w, h := float64(width), float64(height)
	if long := max(w, h); long > ImageFit {
		w, h = w*ImageFit/long, h*ImageFit/long
	}
	if short := min(w, h); short > ImageShortSide {
		w, h = w*ImageShortSide/short, h*ImageShortSide/short
	}
	tiles := func(x float64) int {
		n := int(x) / ImageTile
		if float64(n*ImageTile) < x {
			n++
		}
		return max(n, 1)
	}
	return ImageBase + ImagePerTile*tiles(w)*tiles(h)
}
