package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/tokens"
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
	// Images loads the bytes of a user message's images (its BlockImage
	// blocks), which are sent as image_url parts with a data: URL after
	// the message's text; nil (a model that does not accept images) sends
	// each image as a line saying it is not sent. The bytes are content-addressed, so the loader is as pure
	// as the other rules: the same message always renders the same.
	Images ImageLoader
}

// Entry is a message with everything the request path needs cached.
type Entry struct {
	// Msg is the message, with Msg.Tokens and Msg.TokensKey set to Tokens
	// and the key of Bytes, so storing Msg stores the count.
	Msg    Message
	Wire   chat.Message
	Bytes  []byte // chat.Encode of Wire: the bytes a request body carries for it
	Tokens int    // WireTokens of Wire: the message's one token count
	// Ref is the SHA-256 of a tool result sent as a reference, or "".
	Ref string
}

// WireTokens is the engine's one token formula for a message: what w
// costs on the wire, counted with count. It is the framing
// (tokens.MessageOverhead), the content (of a multi-part content, its
// text parts) and the replayed reasoning, plus for each tool call its own
// framing, its name and its arguments. Image parts are not counted here:
// the log adds each image's estimate (ImageRef.Tokens) from the message's
// blocks.
//
// The AppendLog counts every entry with it once, at append, and keeps the
// count with the message (Entry.Tokens, Message.Tokens). The context
// gauge, the compaction planner and its preview, purge, the CLI and the UI
// all read those counts; a message that is not in a log (a compaction
// placeholder, a re-injected reminder, a purge edit) is counted with
// MessageTokens, which is this formula on the message's own wire form.
func WireTokens(w chat.Message, count Counter) int {
	n := tokens.MessageOverhead + count(w.Content) + count(w.Reasoning)
	for _, p := range w.Parts {
		if p.Type == chat.PartText {
			n += count(p.Text)
		}
	}
	for _, c := range w.ToolCalls {
		n += tokens.MessageOverhead + count(c.Name) + count(c.Arguments)
	}
	return n
}

// Wire returns m's wire form on its own: the chat-completions message m
// is sent as when no history rule (see WireRules) applies to it, without
// its images (which only the log, with its loader, sends). The AppendLog
// starts from it and applies the rules.
func Wire(m Message) chat.Message {
	w := chat.Message{Role: string(m.Role), Content: m.Text()}
	switch m.Role {
	case Assistant:
		if m.ReplayReasoning {
			w.Reasoning = m.Reasoning
		}
		for _, c := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, chat.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		if w.Content == "" && len(w.ToolCalls) == 0 {
			w.Content = "(no reply)"
		}
	case Tool:
		w.ToolCallID = m.ToolCallID
		if w.Content == "" {
			w.Content = "(no output)"
		}
	}
	return w
}

// MessageTokens returns what m costs on the wire on its own, counted with
// tokens.Count: WireTokens of Wire(m) plus the estimate of its images
// (ImageTokens). For a message in a log use the count the log keeps
// (TokensOf), since a history rule may have shortened it.
func MessageTokens(m Message) int { return WireTokens(Wire(m), tokens.Count) + ImageTokens(m) }

// TokensOf returns m's token count: the one the AppendLog set on it
// (Message.Tokens) when there is one, else MessageTokens(m). Code that
// changes a message's content must clear Message.Tokens.
func TokensOf(m Message) int {
	if m.Tokens > 0 {
		return m.Tokens
	}
	return MessageTokens(m)
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
	// From says where each message of the rebuilt log came from: the
	// index in the log before the rebuild of the message it keeps, or -1
	// for one the rewrite wrote (see Match). With Superseded it gives back
	// the log before the rebuild exactly (History). nil in records written
	// before Tally kept it; empty when the rebuilt log is.
	From []int `json:"from"`
	// Start says the rebuild began this cycle's log (a new cycle): the log
	// before it belongs to the previous cycle.
	Start bool `json:"start,omitempty"`
	// Shown is what the session told its host about the rewrite (an
	// encoded rewrite.Info), so a reopened session shows the same row
	// with the same figures; nil in older records.
	Shown json.RawMessage `json:"shown,omitempty"`
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
	gone, _ := Match(before, after)
	return gone
}

// Match pairs the messages of a rewrite's result (after) with those of
// the log it rewrote (before): from[i] is the index in before of the
// message after[i] keeps byte for byte (token counts aside), or -1 when
// the rewrite wrote it; gone lists, in their order, the messages of before
// that after does not keep. Equal messages pair in order, the first with
// the first. It is the one rule by which a rebuild keeps what it removes
// (RebuildRecord.Superseded) and records where each kept message came
// from (RebuildRecord.From).
func Match(before, after []Message) (gone []Superseded, from []int) {
	at := make(map[string][]int, len(before))
	for i, m := range before {
		if b, err := Encode(uncounted(m)); err == nil {
			at[string(b)] = append(at[string(b)], i)
		}
	}
	from = make([]int, len(after))
	kept := make([]bool, len(before))
	for i, m := range after {
		from[i] = -1
		b, err := Encode(uncounted(m))
		if q := at[string(b)]; err == nil && len(q) > 0 {
			from[i], at[string(b)] = q[0], q[1:]
			kept[q[0]] = true
		}
	}
	for i, m := range before {
		if !kept[i] {
			gone = append(gone, Superseded{Index: i, Message: m})
		}
	}
	return gone, from
}

// uncounted is m without its token count, which a rebuild may change
// without changing the message.
func uncounted(m Message) Message {
	m.Tokens, m.TokensKey = 0, ""
	return m
}

// AppendLog is the append-only transcript of one cycle. Append is the only
// way to add a message and Rebuild the only way to change existing ones.
// It is not safe for concurrent use.
type AppendLog struct {
	entries  []Entry
	count    Counter
	keyed    bool // count is tokens.Count: counts are stored and reused
	rules    WireRules
	total    int
	lastMeta string
	seen     map[string]bool
}

// NewAppendLog returns an empty log that counts tokens with count; nil
// means tokens.Count, the engine's tokenizer. Only such a log keys the
// counts it sets on messages (Message.TokensKey) and reuses a count a
// message already carries for the same wire form, so reopening a stored
// session costs no counting; a log with another counter always counts.
func NewAppendLog(count Counter, rules WireRules) *AppendLog {
	keyed := count == nil
	if count == nil {
		count = tokens.Count
	}
	return &AppendLog{count: count, keyed: keyed, rules: rules, seen: map[string]bool{}}
}

// Len returns the number of messages in the log.
func (l *AppendLog) Len() int { return len(l.entries) }

// At returns the i-th entry. The caller must not modify it.
func (l *AppendLog) At(i int) *Entry { return &l.entries[i] }

// Tokens returns the sum of the entries' token estimates.
func (l *AppendLog) Tokens() int { return l.total }

// Rules returns the wire rules in force.
func (l *AppendLog) Rules() WireRules { return l.rules }

// Entries returns the stored entries in order, sharing them: the caller
// must not change them. An entry never changes once appended, and a
// Rebuild replaces the slice rather than writing over it, so what Entries
// returned stays as it was; this lets a reader keep a view of the log
// without copying it.
func (l *AppendLog) Entries() []Entry { return l.entries[:len(l.entries):len(l.entries)] }

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
func (l *AppendLog) AppendWire(dst []chat.Message) []chat.Message {
	for i := range l.entries {
		dst = append(dst, l.entries[i].Wire)
	}
	return dst
}

// Append adds m at the end and returns its entry, with the wire form and
// token count computed now and never again. A count m already carries is
// reused when it was made for exactly this wire form (its TokensKey
// matches) and is plausible (at least 1, at most one token per byte plus
// the framing); otherwise the message is counted.
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
	w := Wire(m)
	var ref string
	imageTok := 0
	switch m.Role {
	case User:
		w.Content = l.userContent(&m, w.Content)
		if imgs := m.Images(); len(imgs) > 0 {
			w.Parts, imageTok = imageParts(w.Content, imgs, l.rules.Images)
			w.Content = ""
		}
	case Tool:
		w.Content, ref = l.toolContent(w.Content, m.ToolName)
	}
	b := chat.Encode(w)
	key := ""
	if l.keyed {
		key = countKey(b)
	}
	n := m.Tokens
	if key == "" || m.TokensKey != key || n < 1 || n > len(b)+tokens.MessageOverhead*(1+len(w.ToolCalls)) {
		n = WireTokens(w, l.count) + imageTok
	}
	m.Tokens, m.TokensKey = n, key
	return Entry{Msg: m, Wire: w, Bytes: b, Tokens: n, Ref: ref}
}

// countKey identifies the wire bytes b, and the tokenizer, a token count
// was made for.
func countKey(b []byte) string {
	h := sha256.New()
	h.Write([]byte(tokens.Encoding))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// userContent applies the folding rule to a user message whose wire text
// is text.
func (l *AppendLog) userContent(m *Message, text string) string {
	meta := m.TurnMeta()
	if meta == "" || !l.rules.FoldTurnMeta {
		if meta != "" {
			l.lastMeta = meta
		}
		return text
	}
	folded := meta == l.lastMeta
	l.lastMeta = meta
	if !folded {
		return text
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

// toolContent applies the reference rule to a tool result's wire text.
func (l *AppendLog) toolContent(text, toolName string) (string, string) {
	if l.rules.DedupeMin <= 0 || len(text) < l.rules.DedupeMin ||
		(l.rules.Exempt != nil && l.rules.Exempt(toolName)) {
		return text, ""
	}
	sum := sha256.Sum256([]byte(text))
	sha := hex.EncodeToString(sum[:])
	if !l.seen[sha] {
		l.seen[sha] = true
		return text, ""
	}
	return fmt.Sprintf("<TOOL_RESULT_REF sha=%q chars=\"%d\">identical to an earlier %s result in this conversation; call retrieve_tool_result with this sha to read it again</TOOL_RESULT_REF>",
		sha, len(text), toolName), sha
}
