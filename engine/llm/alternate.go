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
func AppendJoined(msgs []openai.ChatCompletionMessage, m openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	if n := len(msgs); n > 0 && m.Role == openai.ChatMessageRoleUser && msgs[n-1].Role == openai.ChatMessageRoleUser {
		msgs[n-1].Content += UserJoin + m.Content
		return msgs
	}
	return append(msgs, m)
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
