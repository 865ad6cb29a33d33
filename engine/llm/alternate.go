package llm

import openai "github.com/sashabaranov/go-openai"

// JoinUserRuns returns msgs with every run of consecutive user messages
// joined into one (contents separated by a blank line), so the request
// strictly alternates user and assistant turns. Some providers (DeepSeek's
// reasoner) and chat templates (Gemma's, Mistral's) reject two user
// messages in a row. A system message at index 0 is never joined. msgs is
// not modified.
func JoinUserRuns(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && m.Role == openai.ChatMessageRoleUser && out[n-1].Role == openai.ChatMessageRoleUser {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, m)
	}
	return out
}
