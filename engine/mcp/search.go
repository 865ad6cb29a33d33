package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
)

// searchName is the name of the search tool offered past the budget.
const searchName = "mcp_search"

// Search limits: matches returned by default and at most.
const (
	defaultSearchLimit = 5
	maxSearchLimit     = 10
)

const searchDescription = "Search the tools of the user's MCP servers, which are too many to list here, " +
	"by keywords matched against server names, tool names and descriptions. The best matches are activated: " +
	"call them by the names returned, from your next step on."

const searchSchema = `{"properties":{"limit":{"description":"How many matches to activate, 1 to 10 (default 5).","type":"integer"},` +
	`"query":{"description":"Keywords, for example \"github issue create\".","type":"string"}},"required":["query"],"type":"object"}`

// searchTool is mcp_search: a keyword search over the manager's tools that
// activates what it finds. It runs locally and needs no approval.
type searchTool struct{ m *Manager }

// Spec implements tool.Tool.
func (*searchTool) Spec() tool.Spec {
	return tool.Spec{Name: searchName, Description: searchDescription, Parameters: json.RawMessage(searchSchema)}
}

// NeedsApproval implements tool.Tool: searching runs nothing.
func (*searchTool) NeedsApproval() bool { return false }

// Run implements tool.Tool.
func (st *searchTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return errResult(searchName, fmt.Errorf("the arguments do not fit the schema (%w); send {\"query\": \"keywords\"}", err))
	}
	if strings.TrimSpace(in.Query) == "" {
		return errResult(searchName, fmt.Errorf("the query is empty; send keywords such as {\"query\": \"issue create\"}"))
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	limit = min(limit, maxSearchLimit)
	found := st.m.Search(in.Query, limit)
	if len(found) == 0 {
		return tool.Result{Content: fmt.Sprintf("no MCP tool matches %q; try other keywords (the servers are %s)", in.Query, st.m.serverSummary())}
	}
	var b strings.Builder
	if st.m.opts.OnActivate == nil {
		b.WriteString("These MCP tools match, but they cannot be activated in this session:\n")
	} else {
		fresh := st.m.activate(found)
		fmt.Fprintf(&b, "%d matching MCP tools are active now (%d newly activated); call them by name from your next step:\n", len(found), len(fresh))
	}
	for _, t := range found {
		fmt.Fprintf(&b, "- %s: %s\n", t.spec.Name, text.FirstLine(t.spec.Description, 160))
	}
	return tool.Result{Content: strings.TrimSuffix(b.String(), "\n")}
}

// serverSummary lists the connected servers and their tool counts.
func (m *Manager) serverSummary() string {
	var parts []string
	for _, st := range m.Statuses() {
		if st.State == StateConnected {
			parts = append(parts, fmt.Sprintf("%s with %d tools", st.Name, st.Tools))
		}
	}
	if len(parts) == 0 {
		return "none connected"
	}
	return strings.Join(parts, ", ")
}

// Search returns up to limit tools best matching the keywords of query,
// best first (ties by name). Each keyword scores in the tool's own name
// (most), its server's name, and its description (least); tools that
// match no keyword are left out.
func (m *Manager) Search(query string, limit int) []*Tool {
	terms := words(query)
	if len(terms) == 0 || limit <= 0 {
		return nil
	}
	type scored struct {
		t     *Tool
		score int
	}
	var hits []scored
	for _, t := range m.Tools() {
		name := words(t.remote)
		server := words(t.srv.name)
		desc := words(t.spec.Description)
		score := 0
		for _, q := range terms {
			switch {
			case slices.Contains(name, q):
				score += 6
			case containsPart(name, q):
				score += 3
			}
			if slices.Contains(server, q) || containsPart(server, q) {
				score += 2
			}
			if slices.Contains(desc, q) {
				score += 2
			} else if containsPart(desc, q) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, scored{t, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return b.score - a.score })
	out := make([]*Tool, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.t)
	}
	return out
}

// words splits s into lower-case words at anything but letters and
// digits, and at lower-to-upper case changes (createIssue: create, issue).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// containsPart reports whether a word of ws contains q, for queries of at
// least three letters.
func containsPart(ws []string, q string) bool {
	if len(q) < 3 {
		return false
	}
	for _, w := range ws {
		if strings.Contains(w, q) {
			return true
		}
	}
	return false
}
