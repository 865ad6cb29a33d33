package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/tool"
)

// ToolSummary describes one tool of a probed server, for the settings.
type ToolSummary struct {
	// Name is the model-facing name, RemoteName the server's own.
	Name, RemoteName string
	Description      string
	Annotations      Annotations
	// Tokens is what the tool's spec takes in the catalog.
	Tokens int
	// Parameters is the input schema the model is given for the tool,
	// byte for byte: the server's JSON Schema with every keyword kept.
	Parameters json.RawMessage `json:",omitempty"`
}

// summary describes the tool as the model is given it.
func (t *Tool) summary() ToolSummary {
	return ToolSummary{
		Name: t.spec.Name, RemoteName: t.remote, Description: t.spec.Description,
		Annotations: t.ann, Tokens: t.tokens, Parameters: t.Spec().Parameters,
	}
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
		out = append(out, t.summary())
	}
	return out, nil
}

// Call starts the server name of sc on its own, as Probe does, calls its
// tool (by the server's own name for it, or by the name Tally gives it in
// the catalog) with args, and stops it again: for trying and debugging a
// server outside any session. args must be a JSON object (empty means
// {}). The result is the tool's, redacted and capped as in a session; the
// error says why the call could not be made.
func Call(ctx context.Context, name string, sc ServerConfig, opts Options, toolName string, args json.RawMessage) (tool.Result, error) {
	if err := sc.Validate(name); err != nil {
		return tool.Result{}, err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return tool.Result{}, fmt.Errorf("the arguments are not a JSON object (%q); give them as one, such as '{\"text\": \"hi\"}'", string(args))
	}
	sc.Disabled = false
	opts.OnActivate, opts.OnStatus = nil, nil
	m := NewManager(Config{Servers: map[string]ServerConfig{name: sc}}, opts)
	defer m.Close()
	if err := m.Connect(ctx, name); err != nil {
		return tool.Result{}, err
	}
	var names []string
	for _, t := range m.Tools() {
		if t.remote == toolName || t.spec.Name == toolName {
			return t.Run(ctx, &tool.Env{Workspace: opts.Dir}, args), nil
		}
		names = append(names, t.remote)
	}
	return tool.Result{}, fmt.Errorf("server %q has no tool %q; its tools are: %s", name, toolName, strings.Join(names, ", "))
}
