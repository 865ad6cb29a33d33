package llm

import (
	"errors"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// chatRequest converts r to go-openai's request without its messages and
// tools, which the body assembly adds (see body.go).
// tempZero reports that a temperature of exactly 0 was asked for, which
// go-openai would omit and the assembly therefore adds.
func (r Request) chatRequest() (req openai.ChatCompletionRequest, tempZero bool, err error) {
	if strings.TrimSpace(r.Model) == "" {
		return req, false, errors.New("no model is set; choose a model in the connection settings")
	}
	if len(r.Messages) == 0 {
		return req, false, errors.New("the request has no messages; add at least one message before calling the model")
	}
	if r.MaxTokens < 0 {
		return req, false, errors.New("MaxTokens is negative; use 0 to leave the limit to the server")
	}
	req = openai.ChatCompletionRequest{
		Model: r.Model,
		//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers (DeepSeek, vLLM, llama.cpp) accept
		MaxTokens:     r.MaxTokens,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if r.Temperature != nil {
		if *r.Temperature == 0 {
			tempZero = true
		} else {
			req.Temperature = *r.Temperature
		}
	}
	return req, tempZero, nil
}
