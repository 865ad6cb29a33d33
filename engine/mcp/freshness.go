package mcp

import (
	"context"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the listing of a server's tools and its freshness: the
// cache hint (ttlMs) a server of the 2026-07-28 revision puts on its
// tools/list result says how long the list stays fresh. Tally keeps the
// model's catalog byte-stable all the same: a list listed again only
// appends the tools that are new, at a request boundary.

// minRelist is the shortest time between two listings of a server's tools
// made because the list went stale: a server that says its list is stale
// at once (ttlMs 0) is listed again at most this often, and only when a
// request is made.
const minRelist = time.Minute

// maxListPages bounds the pages of one tools/list, against a server whose
// cursors never end.
const maxListPages = 100

// listTools lists every tool of the session, following pages, up to
// maxTools, sorted by name, with how long the server said the list stays
// fresh (the shortest of its pages' hints; 0 when it gave none or
// speaks an older revision, which has no hints). Within that time the
// SDK answers a listing from its cache. Tools whose x-mcp-header
// annotations are invalid are left out by the SDK.
func listTools(ctx context.Context, cs *sdk.ClientSession) ([]toolInfo, time.Duration, error) {
	var out []toolInfo
	fresh, err := listPages(ctx, func(ctx context.Context, cursor string) ([]*sdk.Tool, string, int, error) {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", 0, err
		}
		return res.Tools, res.NextCursor, res.TTLMs, nil
	}, func(t *sdk.Tool) bool {
		if t != nil && t.Name != "" {
			out = append(out, infoOf(t))
		}
		return len(out) < maxTools
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(out, func(a, b toolInfo) int { return strings.Compare(a.Name, b.Name) })
	if protocolOf(cs) < modernProtocol {
		fresh = 0
	}
	return slices.CompactFunc(out, func(a, b toolInfo) bool { return a.Name == b.Name }), max(fresh, 0), nil
}

// modernProtocol is the first MCP revision without the initialize
// handshake: version and capabilities travel with every request, lists
// carry cache hints and a server asks for input in its results.
const modernProtocol = "2026-07-28"

// protocolOf is the MCP revision the session speaks, "" when unknown.
func protocolOf(cs *sdk.ClientSession) string {
	if cs == nil || cs.InitializeResult() == nil {
		return ""
	}
	return cs.InitializeResult().ProtocolVersion
}

// stale reports whether the connected server's tool list should be listed
// again: it speaks the 2026-07-28 revision, its cache hint has run out
// and at least least (minRelist) passed since the last listing, and none is
// under way. It marks the listing under way when it reports true.
func (s *server) stale(now time.Time, least time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cs == nil || s.state != StateConnected || s.relist || s.protocol < modernProtocol {
		return false
	}
	if now.Sub(s.listed) < max(s.fresh, least) {
		return false
	}
	s.relist = true
	return true
}

// relistStale lists again, in the background, the tools of every server
// whose list went stale; the new ones are pending once it is done.
func (m *Manager) relistStale() {
	now := time.Now()
	for _, name := range m.names {
		s := m.servers[name]
		if !s.stale(now, m.minRelist) {
			continue
		}
		go func() {
			defer func() {
				s.mu.Lock()
				s.relist = false
				s.mu.Unlock()
			}()
			m.refresh(s)
		}()
	}
}
