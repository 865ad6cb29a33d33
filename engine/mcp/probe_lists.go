package mcp

import "context"

// Probed is what a probed server offers: its tools, prompts and resources
// (resource templates among them), and the MCP revision it was spoken to
// in.
type Probed struct {
	// Protocol is the revision, "2026-07-28" or an older one such as
	// "2025-11-25" (see [ServerStatus].Protocol).
	Protocol  string `json:",omitempty"`
	Tools     []ToolSummary
	Prompts   []Prompt   `json:",omitempty"`
	Resources []Resource `json:",omitempty"`
}

// ProbeAll is [Probe] that also lists the server's prompts and resources:
// it starts the server sc under name (even when it is disabled), lists
// what it offers, each list sorted, and stops it. A server that fails to
// list its prompts or resources has none (its log says why); the error is
// the reason the server failed to start, in one sentence.
func ProbeAll(ctx context.Context, name string, sc ServerConfig, opts Options) (Probed, error) {
	if err := sc.Validate(name); err != nil {
		return Probed{}, err
	}
	sc.Disabled = false
	opts.OnActivate, opts.OnStatus = nil, nil
	m := NewManager(Config{Servers: map[string]ServerConfig{name: sc}}, opts)
	defer m.Close()
	if err := m.Connect(ctx, name); err != nil {
		return Probed{}, err
	}
	out := Probed{Protocol: m.servers[name].status().Protocol}
	for _, t := range m.Tools() {
		out.Tools = append(out.Tools, t.summary())
	}
	out.Prompts, out.Resources = m.servers[name].lists(ctx, true)
	return out, nil
}
