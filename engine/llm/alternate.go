package llm

import "github.com/tally-dev/tally/engine/chat"

// UserJoin separates the contents of consecutive user messages joined by
// AppendJoined.
const UserJoin = "\n\n"

// AppendJoined appends m to msgs, except that when m and the last message
// of msgs are both user messages, m is joined into that last message
// instead (contents separated by UserJoin), so a request strictly
// alternates user and assistant turns. Some providers (DeepSeek's reasoner)
// and chat templates (Gemma's, Mistral's) reject two user messages in a
// row.
//
// It is the engine's only rule for consecutive user messages: the turn
// requests, the summary and the hand-off brief all go through it. It
// writes only msgs[len(msgs)-1] and, like append, the spare capacity past
// it: no message before the last one ever changes, so the bytes of earlier
// messages stay the same from request to request. A system message is
// never joined.
//
// When either message has multi-part content (images), the joined message
// has the parts of the first then those of the second, a text content
// counting as one text part, and a text part that meets a text part across
// the join is merged with UserJoin between them; the parts are a new
// slice, so neither message's parts are written.
func AppendJoined(msgs []chat.Message, m chat.Message) []chat.Message {
	if n := len(msgs); n > 0 && m.Role == chat.RoleUser && msgs[n-1].Role == chat.RoleUser {
		last := &msgs[n-1]
		if len(last.Parts) == 0 && len(m.Parts) == 0 {
			last.Content += UserJoin + m.Content
			return msgs
		}
		last.Parts, last.Content = joinParts(partsOf(*last), partsOf(m)), ""
		return msgs
	}
	return append(msgs, m)
}

// partsOf is m's content as parts: its Parts, or its text as one
// text part (none when it is empty).
func partsOf(m chat.Message) []chat.Part {
	if len(m.Parts) > 0 {
		return m.Parts
	}
	if m.Content == "" {
		return nil
	}
	return []chat.Part{{Type: chat.PartText, Text: m.Content}}
}

// joinParts returns a's parts followed by b's in a new slice, a trailing
// text part of a and a leading text part of b merged with UserJoin.
func joinParts(a, b []chat.Part) []chat.Part {
	out := make([]chat.Part, 0, len(a)+len(b))
	out = append(out, a...)
	if k := len(out); k > 0 && len(b) > 0 &&
		out[k-1].Type == chat.PartText && b[0].Type == chat.PartText {
		out[k-1].Text += UserJoin + b[0].Text
		b = b[1:]
	}
	return append(out, b...)
}

// JoinUserRuns returns msgs with every run of consecutive user messages
// joined into one by AppendJoined. msgs is not modified.
func JoinUserRuns(msgs []chat.Message) []chat.Message {
	out := make([]chat.Message, 0, len(msgs))
	for _, m := range msgs {
		out = AppendJoined(out, m)
	}
	return out
}
