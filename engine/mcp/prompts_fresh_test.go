package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListFreshness: a 2026-07-28 server's hints decide how long its
// prompts and resources are reused (the shortest, never under
// minListTTL); an older revision's, or lists without a hint, listTTL.
func TestListFreshness(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		hints    []time.Duration
		want     time.Duration
	}{
		{"2025-11-25", []time.Duration{time.Hour}, listTTL},
		{"2026-07-28", []time.Duration{time.Hour, 10 * time.Minute}, 10 * time.Minute},
		{"2026-07-28", []time.Duration{-1, 5 * time.Minute}, 5 * time.Minute},
		{"2026-07-28", []time.Duration{0}, minListTTL},
		{"2026-07-28", []time.Duration{-1, -1}, listTTL},
	} {
		if got := listFreshness(tc.protocol, tc.hints...); got != tc.want {
			t.Errorf("listFreshness(%s, %v) = %v; want %v", tc.protocol, tc.hints, got, tc.want)
		}
	}
}

// TestPromptsFollowTheCacheHint: the prompts of a 2026-07-28 server whose
// lists stay fresh for an hour are reused for that hour (a prompt it adds
// meanwhile is not listed), and those of a 2025-11-25 server for listTTL.
func TestPromptsFollowTheCacheHint(t *testing.T) {
	for version, want := range map[string]time.Duration{"2026-07-28": time.Hour, "2025-11-25": listTTL} {
		url, wire := eraServer(t, "docs", version, time.Hour, false)
		say := func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}}, nil
		}
		wire.srv.AddPrompt(&sdk.Prompt{Name: "first"}, say)
		m := newManager(t, map[string]ServerConfig{"docs": {URL: url, Timeout: 10}}, Options{})
		m.Start(context.Background())
		if ps := m.Prompts(context.Background()); len(ps) != 1 {
			t.Fatalf("%s: prompts at first: %+v", version, ps)
		}
		c := listsOf(m.servers["docs"])
		c.mu.Lock()
		ttl := c.ttl
		c.mu.Unlock()
		if ttl != want {
			t.Errorf("%s: the lists stay fresh for %v; want %v", version, ttl, want)
		}
		n := wire.count("prompts/list")
		if ps := m.Prompts(context.Background()); len(ps) != 1 || wire.count("prompts/list") != n {
			t.Errorf("%s: the fresh list was asked again (%d prompts, %d listings)", version, len(ps), wire.count("prompts/list"))
		}
	}
}
