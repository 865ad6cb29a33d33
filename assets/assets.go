// Package assets embeds Tally's static files: the prompt texts the engine
// sends (constitution, cache discipline, summary and hand-off templates) and
// the application icon. Their bytes are part of the cached prompt prefix, so
// changing one is a deliberate, versioned event.
package assets

import _ "embed"

// Constitution is the static opening section of every system prompt.
//
//go:embed constitution.md
var Constitution string

// CacheDiscipline is the system-prompt section that teaches the model how
// the prompt cache is billed and how to keep it hitting.
//
//go:embed cache.md
var CacheDiscipline string

// Icon is the application icon (PNG).
//
//go:embed icon.png
var Icon []byte
