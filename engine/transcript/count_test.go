package transcript

import (
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/tokens"
)

// stored returns m as the log stores it: appended, encoded and decoded.
func stored(t testing.TB, l *AppendLog, m Message) (Message, *Entry) {
	t.Helper()
	e := l.Append(m)
	data, err := Encode(e.Msg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return back, e
}

func TestLogCountsWithTheOneFormula(t *testing.T) {
	call := ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"x.go"}`}
	l := NewAppendLog(nil, WireRules{})
	for _, m := range []Message{
		UserText("<turn_meta>m</turn_meta>", "fix x.go", t0),
		AssistantReply("", "think first", []ToolCall{call}, t0),
		ToolResult(call, "", false, t0),
		AssistantReply("", "", nil, t0),
		AssistantReply("done", "unreplayed reasoning", nil, t0),
	} {
		e := l.Append(m)
		if want := WireTokens(e.Wire, tokens.Count); e.Tokens != want || MessageTokens(m) != want || TokensOf(e.Msg) != want {
			t.Errorf("%s message: the log counts %d, MessageTokens %d, TokensOf %d; WireTokens of what is sent is %d",
				m.Role, e.Tokens, MessageTokens(m), TokensOf(e.Msg), want)
		}
		if e.Msg.Tokens != e.Tokens || e.Msg.TokensKey == "" {
			t.Errorf("%s message: the entry's message carries %d tokens (key %q); the entry %d", m.Role, e.Msg.Tokens, e.Msg.TokensKey, e.Tokens)
		}
	}
}

func TestStoredCountIsReusedOnlyForItsWireForm(t *testing.T) {
	call := ToolCall{ID: "c1", Name: "read_file"}
	m, e := stored(t, NewAppendLog(nil, WireRules{}), ToolResult(call, strings.Repeat("a line of the file\n", 100), false, t0))
	if m.Tokens != e.Tokens || m.TokensKey != e.Msg.TokensKey {
		t.Fatalf("the stored message carries %d tokens (key %q); the log counted %d (key %q)", m.Tokens, m.TokensKey, e.Tokens, e.Msg.TokensKey)
	}
	// A count is only ever taken as stored, so a different one that the log
	// keeps proves it did not count again.
	reused := m
	reused.Tokens = e.Tokens + 7
	if got := NewAppendLog(nil, WireRules{}).Append(reused).Tokens; got != e.Tokens+7 {
		t.Errorf("a stored count for the same wire form was not reused: %d", got)
	}
	for name, bad := range map[string]func(*Message){
		"another key":                func(m *Message) { m.TokensKey = "0123456789abcdef" },
		"no key":                     func(m *Message) { m.TokensKey = "" },
		"zero":                       func(m *Message) { m.Tokens = 0 },
		"negative":                   func(m *Message) { m.Tokens = -5 },
		"more than a token per byte": func(m *Message) { m.Tokens = len(e.Bytes) * 2 },
	} {
		x := m
		x.Tokens = e.Tokens + 7
		bad(&x)
		if got := NewAppendLog(nil, WireRules{}).Append(x).Tokens; got != e.Tokens {
			t.Errorf("%s: the log took %d tokens; counting gives %d", name, got, e.Tokens)
		}
	}
	// The text changed but the old count came along (a compaction edit).
	edited := m
	edited.Blocks = []Block{{Type: BlockText, Text: "short now"}}
	if got, want := NewAppendLog(nil, WireRules{}).Append(edited).Tokens, MessageTokens(edited); got != want {
		t.Errorf("an edited message kept its old count %d; it costs %d", got, want)
	}
	// A log with its own counter never trusts a stored count, nor keys its own.
	own := NewAppendLog(func(s string) int { return len(s) }, WireRules{})
	if x := own.Append(reused); x.Tokens == reused.Tokens || x.Msg.TokensKey != "" {
		t.Errorf("a log with another counter took the stored count %d (key %q)", x.Tokens, x.Msg.TokensKey)
	}
}

func TestStoredCountFollowsTheHistory(t *testing.T) {
	meta := "<turn_meta>date: 2026-11-30</turn_meta>"
	rules := WireRules{FoldTurnMeta: true}
	l := NewAppendLog(nil, rules)
	l.Append(UserText(meta, "first", t0))
	l.Append(AssistantReply("ok", "", nil, t0))
	folded, e := stored(t, l, UserText(meta, "second "+strings.Repeat("word ", 50), t0))
	if !strings.HasPrefix(e.Wire.Content, TurnMetaUnchanged) {
		t.Fatalf("the repeated turn_meta was not folded: %.40q", e.Wire.Content)
	}
	// Alone in a rebuilt log the block is sent in full again: its stored
	// count, made for the folded form, must not be taken.
	alone := NewAppendLog(nil, rules).Append(folded)
	if alone.Tokens != MessageTokens(folded) || alone.Tokens <= e.Tokens {
		t.Errorf("unfolded the message counts %d; MessageTokens %d, folded %d", alone.Tokens, MessageTokens(folded), e.Tokens)
	}
}

func TestSupersededByIgnoresCounts(t *testing.T) {
	l := NewAppendLog(nil, WireRules{})
	counted := l.Append(UserText("", "keep me", t0)).Msg
	fresh := UserText("", "keep me", t0)
	if g := SupersededBy([]Message{counted}, []Message{fresh}); len(g) != 0 {
		t.Errorf("a message whose count alone differs was superseded: %+v", g)
	}
}

// BenchmarkReopenLargeMessage appends a stored 4 MiB tool result to a new
// log, as reopening a session does, with its stored count and without.
func BenchmarkReopenLargeMessage(b *testing.B) {
	var text strings.Builder
	for i := 0; text.Len() < 4<<20; i++ {
		text.WriteString("func f() { return strings.Repeat(\"x\", 42) } // a line of a large file\n")
	}
	m, _ := stored(b, NewAppendLog(nil, WireRules{}), ToolResult(ToolCall{ID: "c", Name: "read_file"}, text.String(), false, t0))
	for _, c := range []struct {
		name string
		msg  Message
	}{{"stored", m}, {"uncounted", uncounted(m)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(text.Len()))
			for b.Loop() {
				NewAppendLog(nil, WireRules{}).Append(c.msg)
			}
		})
	}
}
