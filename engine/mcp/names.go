package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>.
const Prefix = "mcp__"

// maxToolName is the longest function name OpenAI-compatible APIs accept.
const maxToolName = 64

// maxDescription bounds a tool description taken from a server, in bytes.
const maxDescription = 2048

// ToolName returns the name the model sees for the tool remote of server:
// "mcp__<server>__<remote>", limited to the function-name charset
// [a-zA-Z0-9_-] and 64 bytes. A name that needed changing (characters
// replaced, or cut) ends in "_" and 8 hex digits of a hash of the original
// server and tool names, so it is stable across runs and two tools whose
// names only differ in replaced characters keep different names.
func ToolName(server, remote string) string {
	full := Prefix + server + "__" + remote
	clean := sanitize(full)
	if clean == full && len(full) <= maxToolName {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + remote))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(clean) > maxToolName-len(suffix) {
		clean = clean[:maxToolName-len(suffix)]
	}
	return clean + suffix
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// wrapKey is the single parameter under which a tool whose input schema is
// not an object schema receives its input.
const wrapKey = "input"

// objectSchema turns a server's input schema into a JSON Schema object
// whose type is "object", as function calling requires. Every string in it
// (descriptions, titles, property names, enum values) is neutralised (see
// transcript.Neutralize): the schema is server text the model reads. A schema object
// without a type gets type "object"; one of another type is wrapped as the
// property "input" (wrapped is then true and the call's arguments are
// unwrapped before sending); anything else (not a JSON object) becomes the
// empty object schema. The output is deterministic: keys are sorted.
func objectSchema(in any) (schema json.RawMessage, wrapped bool) {
	empty := json.RawMessage(`{"properties":{},"type":"object"}`)
	raw, err := json.Marshal(in)
	if err != nil {
		return empty, false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return empty, false
	}
	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			m = map[string]any{
				"type":       "object",
				"properties": map[string]any{wrapKey: m},
				"required":   []string{wrapKey},
			}
			wrapped = true
		}
	default:
		// A list of types or something stranger: offer it as the input.
		m = map[string]any{
			"type":       "object",
			"properties": map[string]any{wrapKey: m},
			"required":   []string{wrapKey},
		}
		wrapped = true
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	out, err := json.Marshal(neutralizeJSON(m))
	if err != nil {
		return empty, false
	}
	return out, wrapped
}

// neutralizeJSON returns v, a decoded JSON value, with every string and
// object key neutralised (see transcript.Neutralize).
func neutralizeJSON(v any) any {
	switch v := v.(type) {
	case string:
		return transcript.Neutralize(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = neutralizeJSON(e)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = transcript.Neutralize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[transcript.Neutralize(k)] = neutralizeJSON(e)
		}
		return out
	}
	return v
}

// description returns the tool's description for the model, cut to
// maxDescription bytes, or a stand-in naming the server when it has none.
// It is neutralised (see transcript.Neutralize), like tool output: a
// server's text must not open or close an engine block.
func description(server string, t toolInfo) string {
	return transcript.Neutralize(rawDescription(server, t))
}

func rawDescription(server string, t toolInfo) string {
	d := strings.TrimSpace(t.Description)
	if d == "" {
		d = strings.TrimSpace(t.Title)
	}
	if d == "" {
		return "Tool " + t.Name + " of the MCP server " + server + "."
	}
	return text.ClipBytes(d, maxDescription)
}
