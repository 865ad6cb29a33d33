package llm

import openai "github.com/sashabaranov/go-openai"

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
func AppendJoined(msgs []openai.ChatCompletionMessage, m openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	if n := len(msgs); n > 0 && m.Role == openai.ChatMessageRoleUser && msgs[n-1].Role == openai.ChatMessageRoleUser {
		last := &msgs[n-1]
		if len(last.MultiContent) == 0 && len(m.MultiContent) == 0 {
			last.Content += UserJoin + m.Content
			return msgs
		}
		last.MultiContent, last.Content = joinParts(partsOf(*last), partsOf(m)), ""
		return msgs
	}
	return append(msgs, m)
}

// partsOf is m's content as parts: its MultiContent, or its text as one
// text part (none when it is empty).
func partsOf(m openai.ChatCompletionMessage) []openai.ChatMessagePart {
	if len(m.MultiContent) > 0 {
		return m.MultiContent
	}
	if m.Content == "" {
		return nil
	}
	return []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: m.Content}}
}

// joinParts returns a's parts followed by b's in a new slice, a trailing
// text part of a and a leading text part of b merged with UserJoin.
func joinParts(a, b []openai.ChatMessagePart) []openai.ChatMessagePart {
	out := make([]openai.ChatMessagePart, 0, len(a)+len(b))
	out = append(out, a...)
	if k := len(out); k > 0 && len(b) > 0 &&
		out[k-1].Type == openai.ChatMessagePartTypeText && b[0].Type == openai.ChatMessagePartTypeText {
		out[k-1].Text += UserJoin + b[0].Text
		b = b[1:]
	}
	return append(out, b...)
}

// JoinUserRuns returns msgs with every run of consecutive user messages
// joined into one by AppendJoined. msgs is not modified.
func JoinUserRuns(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		out = AppendJoined(out, m)
	}
	return out
}
