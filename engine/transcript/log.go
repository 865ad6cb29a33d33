package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Counter returns the number of tokens in a text.
type Counter func(string) int

// TurnMetaUnchanged replaces a <turn_meta> block on the wire when it is
// byte-identical to the previous one.
const TurnMetaUnchanged = "<turn_meta_unchanged/>"

// WireRules are the pure, history-only rules that shape a message's wire
// form when it is appended. They must not change during a session's life
// except at a Rebuild, or the bytes of later messages would depend on when
// they were rendered.
type WireRules struct {
	// FoldTurnMeta sends a <turn_meta> block that equals the previous one as
	// <turn_meta_unchanged/>.
	FoldTurnMeta bool
	// DedupeMin, when > 0, sends a tool result of at least this many bytes
	// that is identical to an earlier result in the log as a
	// <TOOL_RESULT_REF sha="..."> line instead of the full text.
	DedupeMin int
	// Exempt reports tools whose results are never deduplicated (writes).
	Exempt func(tool string) bool
}

// Entry is a message with everything the request path needs cached.
type Entry struct {
	Msg    Message
	Wire   openai.ChatCompletionMessage
	Bytes  []byte // canonical JSON of Wire, exactly as sent
	Tokens int    // estimated tokens of Wire including framing
	// Ref is the SHA-256 of a tool result sent as a reference, or "".
	Ref string
}

// RebuildRecord documents one rewrite of the log for the audit trail.
type RebuildRecord struct {
	Reason       string    `json:"reason"`
	Time         time.Time `json:"time"`
	BeforeLen    int       `json:"before_len"`
	AfterLen     int       `json:"after_len"`
	BeforeTokens int       `json:"before_tokens"`
	AfterTokens  int       `json:"after_tokens"`
	BeforeHash   string    `json:"before_hash"`
	AfterHash    string    `json:"after_hash"`
	Detail       string    `json:"detail,omitempty"`
	// Cycle is the cycle whose log was rewritten.
	Cycle int `json:"cycle,omitempty"`
	// Superseded is the SHA-256 of a stored blob holding the messages the
	// rebuild removed or changed (a JSON array of Superseded), so nothing
	// committed is ever lost; "" when none.
	Superseded      string `json:"superseded,omitempty"`
	SupersededCount int    `json:"superseded_count,omitempty"`
}

// Superseded is a message a rebuild removed or rewrote, with its position
// in the log before the rebuild.
type Superseded struct {
	Index   int     `json:"index"`
	Message Message `json:"message"`
}

// SupersededBy returns the messages of before that after no longer holds
// byte for byte, in their order, for safe keeping.
func SupersededBy(before, after []Message) []Superseded {
	kept := make(map[string]int, len(after))
	for _, m := range after {
		if b, err := Encode(m); err == nil {
			kept[string(b)]++
		}
	}
	var out []Superseded
	for i, m := range before {
		b, err := Encode(m)
		if err == nil && kept[string(b)] > 0 {
			kept[string(b)]--
			continue
		}
		out = append(out, Superseded{Index: i, Message: m})
	}
	return out
}

// AppendLog is the append-only transcript of one cycle. Append is the only
// way to add a message and Rebuild the only way to change existing ones.
// It is not safe for concurrent use.
type AppendLog struct {
	entries  []Entry
	count    Counter
	rules    WireRules
	total    int
	lastMeta string
	seen     map[string]bool
}

// NewAppendLog returns an empty log that counts tokens with count.
func NewAppendLog(count Counter, rules WireRules) *AppendLog {
	if count == nil {
		count = func(s string) int { return (len(s) + 3) / 4 }
	}
	return &AppendLog{count: count, rules: rules, seen: map[string]bool{}}
}

// Len returns the number of messages in the log.
func (l *AppendLog) Len() int { return len(l.entries) }

// At returns the i-th entry. The caller must not modify it.
func (l *AppendLog) At(i int) *Entry { return &l.entries[i] }

// Tokens returns the sum of the entries' token estimates.
func (l *AppendLog) Tokens() int { return l.total }

// Rules returns the wire rules in force.
func (l *AppendLog) Rules() WireRules { return l.rules }

// Messages returns a copy of the stored messages in order.
func (l *AppendLog) Messages() []Message {
	out := make([]Message, len(l.entries))
	for i := range l.entries {
		out[i] = l.entries[i].Msg
	}
	return out
}

// AppendWire appends the cached wire messages to dst: a verbatim copy,
// never a re-render.
func (l *AppendLog) AppendWire(dst []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	for i := range l.entries {
		dst = append(dst, l.entries[i].Wire)
	}
	return dst
}

// Append adds m at the end and returns its entry, with the wire form and
// token count computed now and never again.
func (l *AppendLog) Append(m Message) *Entry {
	e := l.render(m)
	l.entries = append(l.entries, e)
	l.total += e.Tokens
	return &l.entries[len(l.entries)-1]
}

// Rebuild replaces the whole log with msgs and returns the record of it.
// Every entry is rendered again from scratch, since the wire rules look
// at earlier history. Rebuild is the only rewrite of the log.
func (l *AppendLog) Rebuild(reason string, msgs []Message, at time.Time) RebuildRecord {
	rec := RebuildRecord{
		Reason: reason, Time: at,
		BeforeLen: len(l.entries), BeforeTokens: l.total, BeforeHash: l.Hash(),
	}
	l.entries = nil
	l.total = 0
	l.lastMeta = ""
	l.seen = map[string]bool{}
	for _, m := range msgs {
		l.Append(m)
	}
	rec.AfterLen, rec.AfterTokens, rec.AfterHash = len(l.entries), l.total, l.Hash()
	return rec
}

// Hash returns the SHA-256 of the concatenated wire bytes, hex encoded.
func (l *AppendLog) Hash() string {
	h := sha256.New()
	for i := range l.entries {
		h.Write(l.entries[i].Bytes)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (l *AppendLog) render(m Message) Entry {
	w := openai.ChatCompletionMessage{Role: string(m.Role)}
	var ref string
	switch m.Role {
	case User:
		w.Content = l.userContent(&m)
	case Assistant:
		w.Content = m.Text()
		if m.ReplayReasoning {
			w.ReasoningContent = m.Reasoning
		}
		for _, c := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, openai.ToolCall{
				ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
			})
		}
		if w.Content == "" && len(w.ToolCalls) == 0 {
			w.Content = "(no reply)"
		}
	case Tool:
		w.ToolCallID = m.ToolCallID
		w.Content, ref = l.toolContent(&m)
	}
	b, err := json.Marshal(w)
	if err != nil {
		// Only a MultiContent misuse can fail, and we never set it.
		b = []byte(fmt.Sprintf(`{"role":%q}`, w.Role))
	}
	n := 4 + l.count(w.Content) + l.count(w.ReasoningContent)
	for _, c := range w.ToolCalls {
		n += 4 + l.count(c.Function.Name) + l.count(c.Function.Arguments)
	}
	return Entry{Msg: m, Wire: w, Bytes: b, Tokens: n, Ref: ref}
}

func (l *AppendLog) userContent(m *Message) string {
	meta := m.TurnMeta()
	if meta == "" || !l.rules.FoldTurnMeta {
		if meta != "" {
			l.lastMeta = meta
		}
		return m.Text()
	}
	folded := meta == l.lastMeta
	l.lastMeta = meta
	if !folded {
		return m.Text()
	}
	out := ""
	for i, bl := range m.Blocks {
		if i > 0 {
			out += "\n"
		}
		if bl.Type == BlockTurnMeta {
			out += TurnMetaUnchanged
		} else {
			out += bl.Text
		}
	}
	return out
}

func (l *AppendLog) toolContent(m *Message) (string, string) {
	text := m.Text()
	if text == "" {
		text = "(no output)"
	}
	if l.rules.DedupeMin <= 0 || len(text) < l.rules.DedupeMin ||
		(l.rules.Exempt != nil && l.rules.Exempt(m.ToolName)) {
		return text, ""
	}
	sum := sha256.Sum256([]byte(text))
	sha := hex.EncodeToString(sum[:])
	if !l.seen[sha] {
		l.seen[sha] = true
		return text, ""
	}
	return fmt.Sprintf("<TOOL_RESULT_REF sha=%q chars=\"%d\">identical to an earlier %s result in this conversation; call retrieve_tool_result with this sha to read it again</TOOL_RESULT_REF>",
		sha, len(text), m.ToolName), sha
}
