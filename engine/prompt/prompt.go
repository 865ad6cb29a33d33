// Package prompt assembles the prefix zone of every request: the system
// prompt, built from sections ordered from most to least stable, and its
// fingerprint. Assembly is a pure function of its inputs: it does no I/O,
// reads no clock and keeps no state, so the same inputs give the same bytes.
package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/tally-dev/tally/engine/chat"
)

// Tier is how often a section may change. Lower tiers come first so that a
// change to a volatile section invalidates as little of the cached prefix
// as possible.
type Tier int

// Stability tiers, most stable first.
const (
	Static    Tier = iota // same for every session of this Tally version
	Workspace             // fixed for a workspace (AGENTS.md, layout)
	Session               // fixed for a session (environment, model)
	Dynamic               // may change during a session (compaction summary)
)

// String names the tier.
func (t Tier) String() string {
	switch t {
	case Static:
		return "static"
	case Workspace:
		return "workspace"
	case Session:
		return "session"
	case Dynamic:
		return "dynamic"
	}
	return "unknown"
}

// Section is one titled part of the system prompt.
type Section struct {
	Name string `json:"name"`
	Tier Tier   `json:"tier"`
	Text string `json:"text"`
}

// separator joins sections in the assembled prompt.
const separator = "\n\n"

// Assemble orders sections by tier (stable within a tier, so callers
// control the order of equals) and joins their texts. Empty sections are
// skipped. It returns the text and the offset of each kept section.
func Assemble(sections []Section) (string, []Span) {
	sorted := make([]Section, 0, len(sections))
	for _, s := range sections {
		if strings.TrimSpace(s.Text) != "" {
			sorted = append(sorted, s)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Tier < sorted[j].Tier })
	var b strings.Builder
	spans := make([]Span, 0, len(sorted))
	for i, s := range sorted {
		if i > 0 {
			b.WriteString(separator)
		}
		text := strings.TrimRight(s.Text, "\n")
		spans = append(spans, Span{Name: s.Name, Tier: s.Tier, Offset: b.Len(), SHA: digest([]byte(text))})
		b.WriteString(text)
	}
	return b.String(), spans
}

// Extend appends sec after an assembled prompt (text and its spans, as
// Assemble returned them), joined by the same separator, and returns the
// new text and spans; an empty section leaves the prompt as it is. It is
// how a section that changes during a session (the compaction summary)
// joins the prompt, so the prompt has one joining rule.
func Extend(text string, spans []Span, sec Section) (string, []Span) {
	out := append([]Span(nil), spans...)
	if strings.TrimSpace(sec.Text) == "" {
		return text, out
	}
	if text != "" {
		text += separator
	}
	out = append(out, Span{Name: sec.Name, Tier: sec.Tier, Offset: len(text), SHA: digest([]byte(sec.Text))})
	return text + sec.Text, out
}

// Span locates one section or tool inside the prefix.
type Span struct {
	Name   string `json:"name"`
	Tier   Tier   `json:"tier"`
	Offset int    `json:"offset"`
	SHA    string `json:"sha"`
}

// Fingerprint identifies a prefix: the system prompt and the tool catalog,
// each hashed as a whole and per part.
type Fingerprint struct {
	System   string `json:"system"`   // SHA-256 of the system prompt text
	Tools    string `json:"tools"`    // SHA-256 of the tool catalog JSON
	Combined string `json:"combined"` // SHA-256 of both
	Sections []Span `json:"sections"`
	ToolList []Span `json:"tool_list"`
}

// Fingerprints computes the fingerprint of a system prompt with the given
// section spans and a tool catalog.
func Fingerprints(system string, spans []Span, tools []chat.Tool) Fingerprint {
	catalog, _ := json.Marshal(tools)
	fp := Fingerprint{System: digest([]byte(system)), Tools: digest(catalog), Sections: spans}
	fp.Combined = digest([]byte(fp.System + fp.Tools))
	off := 1 // after '['
	for _, t := range tools {
		b, _ := json.Marshal(t)
		fp.ToolList = append(fp.ToolList, Span{Name: t.Name, Offset: off, SHA: digest(b)})
		off += len(b) + 1
	}
	return fp
}

// Digest returns the hex SHA-256 of s, the hash used in spans.
func Digest(s string) string { return digest([]byte(s)) }

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
