package llm

import (
	"net/url"
	"strings"

	"github.com/tally-dev/tally/engine/chat"

	openai "github.com/sashabaranov/go-openai"
)

// Effort is chat.Effort, the request parameter the adapter maps per
// provider (see Dialect).
type Effort = chat.Effort

// The effort levels (see chat.Effort).
const (
	EffortDefault = chat.EffortDefault
	EffortOff     = chat.EffortOff
	EffortLow     = chat.EffortLow
	EffortMedium  = chat.EffortMedium
	EffortHigh    = chat.EffortHigh
	EffortMax     = chat.EffortMax
)

// EffortLevels lists the levels in order, the default first.
var EffortLevels = chat.EffortLevels

// ParseEffort reads a level by name (see chat.ParseEffort).
func ParseEffort(s string) (Effort, error) { return chat.ParseEffort(s) }

// Dialect is how a provider takes the effort: the request members a level
// maps to.
type Dialect string

// The dialects.
const (
	// DialectOpenAI sends "reasoning_effort": none, low, medium, high or
	// xhigh (OpenAI, OpenRouter and the other hosted OpenAI-compatible
	// APIs).
	DialectOpenAI Dialect = "openai"
	// DialectDeepSeek sends DeepSeek's thinking switch, "thinking":
	// {"type": "enabled"|"disabled"}, and while it is on
	// "reasoning_effort": low, medium, high or max.
	DialectDeepSeek Dialect = "deepseek"
	// DialectTemplate sends "chat_template_kwargs": {"enable_thinking":
	// bool, "reasoning_effort": low|medium|high}, the variables a Qwen3
	// (or gpt-oss) chat template reads under llama.cpp's server and vLLM.
	DialectTemplate Dialect = "template"
)

// DialectFor is the dialect of the provider at baseURL: DeepSeek's for its
// API, OpenAI's for a hosted API, and a chat template's for anything else
// (a local llama.cpp, vLLM or Ollama server).
func DialectFor(baseURL string) Dialect {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return DialectTemplate
	}
	host := strings.ToLower(u.Hostname())
	is := func(h string) bool { return host == h || strings.HasSuffix(host, "."+h) }
	switch {
	case is("deepseek.com"):
		return DialectDeepSeek
	case is("openai.com"), is("openrouter.ai"), is("groq.com"), is("together.xyz"), is("mistral.ai"),
		is("x.ai"), is("fireworks.ai"), is("azure.com"), is("googleapis.com"):
		return DialectOpenAI
	}
	return DialectTemplate
}

// EffortSource gives the effort a request is sent with when the request
// names none (Request.Effort empty): the level set for its session and
// role (Request.Session, Request.Role). It must be safe for concurrent
// use.
type EffortSource interface {
	Effort(session, role string) Effort
}

// applyEffort sets the members of effort e in dialect d on creq, and
// returns the encoded members go-openai has no field for (DeepSeek's
// thinking switch), which the body assembly adds; nil when there are none.
func applyEffort(creq *openai.ChatCompletionRequest, d Dialect, e Effort) []byte {
	if e == EffortDefault {
		return nil
	}
	switch d {
	case DialectDeepSeek:
		if e == EffortOff {
			return []byte(`"thinking":{"type":"disabled"}`)
		}
		creq.ReasoningEffort = string(e)
		return []byte(`"thinking":{"type":"enabled"}`)
	case DialectOpenAI:
		creq.ReasoningEffort = map[Effort]string{EffortOff: "none", EffortMax: "xhigh"}[e]
		if creq.ReasoningEffort == "" {
			creq.ReasoningEffort = string(e)
		}
	default:
		kw := map[string]any{"enable_thinking": e != EffortOff}
		if e != EffortOff {
			kw["reasoning_effort"] = string(e)
			if e == EffortMax {
				kw["reasoning_effort"] = string(EffortHigh) // gpt-oss templates know low, medium and high
			}
		}
		creq.ChatTemplateKwargs = kw
	}
	return nil
}
