package mcp

import (
	"context"
)

// ToolSummary describes one tool of a probed server, for the settings.
type ToolSummary struct {
	// Name is the model-facing name, RemoteName the server's own.
	Name, RemoteName string
	Description      string
	Annotations      Annotations
	// Tokens is what the tool's spec takes in the catalog.
	Tokens int
}

// Probe starts the server sc under name (even when it is disabled), lists
// its tools and stops it, for the settings' "test" button. It returns the
// tools sorted by name, or the reason the server failed, in one sentence.
func Probe(ctx context.Context, name string, sc ServerConfig, opts Options) ([]ToolSummary, error) {
	if err := sc.Validate(name); err != nil {
		return nil, err
	}
	sc.Disabled = false
	opts.OnActivate, opts.OnStatus = nil, nil
	m := NewManager(Config{Servers: map[string]ServerConfig{name: sc}}, opts)
	defer m.Close()
	if err := m.Connect(ctx, name); err != nil {
		return nil, err
	}
	var out []ToolSummary
	for _, t := range m.Tools() {
		out = append(out, ToolSummary{
			Name: t.spec.Name, RemoteName: t.remote, Description: t.spec.Description,
			Annotations: t.ann, Tokens: t.tokens,
		})
	}
	return out, nil
}
