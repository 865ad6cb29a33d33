// Package templatehook is where the chat-template renderer registers
// itself for the scripted server: engine/llm/llmtest renders requests
// through it when package chattemplates is linked in (tests and the smoke
// server import it), and falls back to its plain rendering otherwise, so
// the shipped app's demo model does not carry a template engine.
package templatehook

import (
	"encoding/json"
	"sync"
)

// Renderer renders a chat request (its raw messages and tools) with the
// named template; gen adds the generation prompt.
type Renderer func(name string, msgs, tools []json.RawMessage, gen bool) (string, error)

var (
	mu       sync.RWMutex
	renderer Renderer
)

// Register makes f the renderer.
func Register(f Renderer) {
	mu.Lock()
	defer mu.Unlock()
	renderer = f
}

// Get returns the registered renderer, or nil.
func Get() Renderer {
	mu.RLock()
	defer mu.RUnlock()
	return renderer
}
