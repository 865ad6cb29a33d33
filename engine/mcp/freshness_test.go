package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/tool"
)

// pendingUntil calls m.Pending, as a session does before each request,
// until it hands out something or the wait is over.
func pendingUntil(m *Manager, wait time.Duration) []tool.Tool {
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		if got := m.Pending(); len(got) > 0 || time.Now().After(deadline) {
			return got
		}
	}
}

func specsOf(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		data, _ := json.Marshal(t.Spec())
		out = append(out, string(data))
	}
	return out
}

// TestStaleToolListIsListedAgainAndAppended: a server of the 2026-07-28
// revision that does not announce changes says how long its tool list
// stays fresh. Within that time it is not asked again; after it, the
// next request lists it again, its new tool is appended, and the specs
// already handed out stay byte for byte as they were, even for a tool
// the server changed.
func TestStaleToolListIsListedAgainAndAppended(t *testing.T) {
	const ttl = 300 * time.Millisecond
	url, wire := eraServer(t, "fresh", "2026-07-28", ttl, false)
	m := newManager(t, map[string]ServerConfig{"fresh": {URL: url}}, Options{Budget: -1})
	m.minRelist = 0
	if err := m.Connect(context.Background(), "fresh"); err != nil {
		t.Fatal(err)
	}
	first := m.Pending()
	before := specsOf(first)
	if len(first) != 3 {
		t.Fatalf("the first hand-out was %v", before)
	}
	wire.srv.AddTool(&sdk.Tool{Name: "who", Description: "A new description.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("changed"), nil
		})
	wire.srv.AddTool(&sdk.Tool{Name: "late", Description: "A tool added later.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("late"), nil
		})
	if got := m.Pending(); len(got) != 0 {
		t.Fatalf("a fresh list was listed again: %v", specsOf(got))
	}
	if n := wire.count("tools/list"); n != 1 {
		t.Fatalf("tools/list was asked %d times within the list's freshness", n)
	}
	time.Sleep(ttl)
	added := pendingUntil(m, 10*time.Second)
	if len(added) != 1 || added[0].Spec().Name != "mcp__fresh__late" {
		t.Fatalf("after the list went stale the hand-out was %v (tools/list asked %d times)", specsOf(added), wire.count("tools/list"))
	}
	var after []tool.Tool
	for _, tl := range first {
		now, _ := m.Lookup(tl.Spec().Name)
		after = append(after, now)
	}
	if !slices.Equal(specsOf(after), before) {
		t.Fatalf("the catalog's specs changed:\n%v\n%v", before, specsOf(after))
	}
}

// TestModernServerAnnouncesNewTools: a server of the 2026-07-28 revision
// announces a new tool on the subscriptions/listen stream, and the tool
// is appended.
func TestModernServerAnnouncesNewTools(t *testing.T) {
	url, wire := eraServer(t, "news", "2026-07-28", 0, true)
	m := newManager(t, map[string]ServerConfig{"news": {URL: url}}, Options{Budget: -1})
	if err := m.Connect(context.Background(), "news"); err != nil {
		t.Fatal(err)
	}
	if got := m.Pending(); len(got) != 3 {
		t.Fatalf("the first hand-out was %v", specsOf(got))
	}
	wire.srv.AddTool(&sdk.Tool{Name: "late", Description: "A tool added later.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("late"), nil
		})
	added := pendingUntil(m, 10*time.Second)
	if len(added) != 1 || added[0].Spec().Name != "mcp__news__late" {
		t.Fatalf("the announced tool was not appended: %v (the server saw %s)", specsOf(added), wire)
	}
}

// schema2020 uses the keywords of JSON Schema 2020-12 that a client
// might drop: $schema, $defs with an $anchor, $ref, composition,
// conditionals, additionalProperties, dependentRequired, prefixItems.
const schema2020 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {"address": {"$anchor": "addr", "type": "object",
		"properties": {"street": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
		"required": ["street"], "additionalProperties": false}},
	"properties": {
		"home": {"$ref": "#/$defs/address"},
		"kind": {"enum": ["person", "company"]},
		"vat": {"type": "string"},
		"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false},
		"size": {"anyOf": [{"type": "integer", "minimum": 0, "exclusiveMaximum": 1e3}, {"type": "string", "const": "big"}]}
	},
	"allOf": [{"required": ["kind"]}],
	"if": {"properties": {"kind": {"const": "company"}}},
	"then": {"required": ["vat"]},
	"else": {"not": {"required": ["vat"]}},
	"dependentRequired": {"vat": ["kind"]},
	"additionalProperties": false
}`

// TestSchema2020ReachesTheModelIntact: the schema the model is given for
// a tool is the server's, every keyword kept.
func TestSchema2020ReachesTheModelIntact(t *testing.T) {
	url, wire := eraServer(t, "schemas", "2026-07-28", 0, false)
	wire.srv.AddTool(&sdk.Tool{Name: "rich", Description: "A tool with a rich schema.", InputSchema: json.RawMessage(schema2020)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return textResult("ok"), nil })
	m := newManager(t, map[string]ServerConfig{"schemas": {URL: url}}, Options{Budget: -1})
	if err := m.Connect(context.Background(), "schemas"); err != nil {
		t.Fatal(err)
	}
	tl, ok := m.Lookup("mcp__schemas__rich")
	if !ok {
		t.Fatalf("no rich tool among %v", toolNames(m.Tools()))
	}
	var want, got any
	if err := json.Unmarshal([]byte(schema2020), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(tl.Spec().Parameters, &got); err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(w) != string(g) {
		t.Fatalf("the model got\n%s\nfor the server's\n%s", g, w)
	}
}

// TestInvalidHeaderToolLeftOutAndLogged: a tool whose x-mcp-header
// annotation is invalid is not offered, the server's other tools are, and
// the server's log says which was left out.
func TestInvalidHeaderToolLeftOutAndLogged(t *testing.T) {
	url, wire := eraServer(t, "headers", "2026-07-28", 0, false)
	// The SDK's server refuses such a tool, so it is slipped into the
	// list as it goes out.
	wire.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if l, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				l.Tools = append(l.Tools, &sdk.Tool{Name: "bad", Description: "A header on an object.", InputSchema: json.RawMessage(
					`{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}`)})
			}
			return res, err
		}
	})
	logPath := filepath.Join(t.TempDir(), "headers.log")
	m := newManager(t, map[string]ServerConfig{"headers": {URL: url}}, Options{Budget: -1, LogPath: func(string) string { return logPath }})
	if err := m.Connect(context.Background(), "headers"); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(m.Tools()); slices.Contains(names, "mcp__headers__bad") || !slices.Contains(names, "mcp__headers__region") {
		t.Fatalf("the tools offered are %v", names)
	}
	if out, isErr := run(t, m, "mcp__headers__region", `{"region":"eu"}`); isErr || wire.mcpParam["Region"] != "eu" {
		t.Fatalf("region gave %q (error %v), header %q", out, isErr, wire.mcpParam["Region"])
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "excluding tool") || !strings.Contains(string(log), "bad") {
		t.Fatalf("the log says %q", log)
	}
}
