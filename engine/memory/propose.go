package memory

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/internal/text"
)

// Instruction is the request the proposal appends to the session's
// conversation, before the list of the user's turns.
//
//go:embed instruction.md
var Instruction string

// Limits of a proposal.
const (
	// MaxProposed is how many entries one proposal keeps; the rest are
	// dropped with a note.
	MaxProposed = 8
	// ProposalTokens caps the model's answer.
	ProposalTokens = 1500
	// turnClip is how many characters of each user turn the instruction
	// quotes.
	turnClip = 80
)

// proposalTemperature keeps the proposal close to what the session said.
var proposalTemperature float32 = 0.2

// Turn is one of the user's numbered turns of a session, as the
// instruction lists it.
type Turn struct {
	N    int
	Text string
}

// Request is the proposal request over a session's conversation: base is
// the request the session would send next (its system prompt, tool
// catalogue and log, so the provider's cache serves all of it), with the
// instruction and the numbered list of the user's turns appended as the
// last user message; the tools stay so the prefix stays the same, and the
// instruction asks for no call.
func Request(base llm.Request, turns []Turn) llm.Request {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(Instruction))
	b.WriteString("\n\nThe user's turns:\n")
	if len(turns) == 0 {
		b.WriteString("(none)\n")
	}
	for _, t := range turns {
		fmt.Fprintf(&b, "%d: %s\n", t.N, text.OneLine(t.Text, turnClip))
	}
	req := base
	req.Messages = llm.AppendJoined(append([]chat.Message(nil), base.Messages...),
		chat.Message{Role: chat.RoleUser, Content: strings.TrimRight(b.String(), "\n")})
	req.Encoded = llm.Encodings{}
	req.MaxTokens = ProposalTokens
	t := proposalTemperature
	req.Temperature = &t
	return req
}

// Proposal is what one proposal call gave: the valid entries and a note
// for each part of the answer that was dropped.
type Proposal struct {
	Entries []Entry  `json:"entries"`
	Notes   []string `json:"notes,omitempty"`
}

// Propose asks m (the session's model, metered under its own ledger kind
// by the caller) for entries over the request Request builds, and reads
// the answer with Parse. An answer that is not the JSON asked for gives
// no entries and a note, never an error: only a failed call is one.
func Propose(ctx context.Context, m llm.Model, base llm.Request, turns []Turn, session, workspace string) (Proposal, error) {
	if m == nil {
		return Proposal{}, errors.New("no model is configured to propose memory entries; choose a model in the connection settings")
	}
	resp, err := m.Stream(ctx, Request(base, turns), llm.Callbacks{})
	if err != nil {
		if llm.IsContextLengthExceeded(err) {
			return Proposal{}, fmt.Errorf("the session is too long to propose memory entries from (%w); compact it first", err)
		}
		return Proposal{}, fmt.Errorf("the proposal call failed (%w); try again or switch to another model", err)
	}
	if resp == nil {
		return Proposal{Notes: []string{"the model gave no answer, so nothing was proposed"}}, nil
	}
	p := Parse(resp.Content, turns, session, workspace)
	if len(resp.ToolCalls) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("the model also called %s; the call was ignored", text.Plural(len(resp.ToolCalls), "tool")))
	}
	return p, nil
}

// rawEntry is one entry as the model wrote it; Source may be a number, a
// string holding one ("turn 3") or an object with a turn.
type rawEntry struct {
	Kind   string          `json:"kind"`
	Text   string          `json:"text"`
	Source json.RawMessage `json:"source"`
}

// Parse reads a proposal answer: the JSON object {"entries": [...]} (or a
// bare array of entries), found even inside a code fence or after a line
// of prose. Each entry must have a known kind and a text that Clean
// accepts; one that does not is dropped with a note saying why. A source
// that names no turn of turns keeps the entry with turn 0 and a note. It
// never fails and never panics, whatever content holds.
func Parse(content string, turns []Turn, session, workspace string) Proposal {
	var p Proposal
	raws, err := decode(content)
	if err != nil {
		p.Notes = append(p.Notes, "the model's answer was not the JSON asked for ("+err.Error()+"), so nothing was proposed")
		return p
	}
	known := map[int]bool{}
	for _, t := range turns {
		known[t.N] = true
	}
	seen := map[string]bool{}
	for i, r := range raws {
		n := i + 1
		kind, err := ParseKind(r.Kind)
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("entry %d was dropped: %v", n, err))
			continue
		}
		txt, err := Clean(r.Text)
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("entry %d was dropped: %v", n, err))
			continue
		}
		if seen[string(kind)+txt] {
			p.Notes = append(p.Notes, fmt.Sprintf("entry %d was dropped: it repeats an earlier one", n))
			continue
		}
		if len(p.Entries) == MaxProposed {
			p.Notes = append(p.Notes, fmt.Sprintf("entry %d was dropped: a proposal keeps at most %d", n, MaxProposed))
			continue
		}
		seen[string(kind)+txt] = true
		turn := sourceTurn(r.Source)
		if !known[turn] {
			if len(r.Source) > 0 && string(r.Source) != "null" {
				p.Notes = append(p.Notes, fmt.Sprintf("entry %d names no turn of the session (%s), so its turn is unknown", n, text.OneLine(string(r.Source), 40)))
			}
			turn = 0
		}
		p.Entries = append(p.Entries, Entry{Kind: kind, Text: txt, Source: Source{Session: session, Turn: turn}, Workspace: workspace})
	}
	return p
}

// decode finds the entries in content: the first JSON value that starts
// at a "{" or "[" and decodes as {"entries": [...]} or as an array.
func decode(content string) ([]rawEntry, error) {
	var firstErr error
	for i := 0; i < len(content); i++ {
		c := content[i]
		if c != '{' && c != '[' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(content[i:]))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		var obj struct {
			Entries []json.RawMessage `json:"entries"`
		}
		var list []json.RawMessage
		switch {
		case c == '{' && json.Unmarshal(v, &obj) == nil && obj.Entries != nil:
			list = obj.Entries
		case c == '[' && json.Unmarshal(v, &list) == nil:
		default:
			continue
		}
		out := make([]rawEntry, len(list))
		for k, raw := range list {
			_ = json.Unmarshal(raw, &out[k]) // a malformed entry stays empty and is dropped by kind
		}
		return out, nil
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errors.New(`no {"entries": [...]} in it`)
}

// sourceTurn reads the turn a source names: 3, "3", "turn 3" or
// {"turn": 3}; 0 when it names none.
func sourceTurn(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var obj struct {
		Turn json.RawMessage `json:"turn"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Turn != nil {
		return sourceTurn(obj.Turn)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0
	}
	for f := range strings.FieldsFuncSeq(s, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ = strconv.Atoi(f)
		return n
	}
	return 0
}
