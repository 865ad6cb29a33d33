package llmtest

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// created is the fixed "created" timestamp of every answer, so answers are
// byte-for-byte reproducible.
const created = 1700000000

// pieceBytes is the maximum size of one streamed content or reasoning piece.
const pieceBytes = 12

// answer writes one successful (or drop-faulted) reply.
type answer struct {
	id           string
	model        string
	reply        Reply
	usage        usage
	fields       UsageFields
	includeUsage bool
}

type chunkJSON struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chunkChoice   `json:"choices"`
	Usage   json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        deltaJSON `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type deltaJSON struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (a *answer) finishReason() string {
	switch {
	case a.reply.FinishReason != "":
		return a.reply.FinishReason
	case len(a.reply.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// usageJSON renders the usage object with the configured cache fields.
func (a *answer) usageJSON() json.RawMessage {
	if a.reply.Usage != nil {
		return a.reply.Usage
	}
	u := map[string]any{
		"prompt_tokens":     a.usage.prompt,
		"completion_tokens": a.usage.completion,
		"total_tokens":      a.usage.prompt + a.usage.completion,
		"completion_tokens_details": map[string]any{
			"reasoning_tokens": a.usage.reasoning,
		},
	}
	if a.fields&UsageDeepSeek != 0 {
		u["prompt_cache_hit_tokens"] = a.usage.hit
		u["prompt_cache_miss_tokens"] = a.usage.miss
	}
	if a.fields&UsageOpenAI != 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": a.usage.hit}
	}
	b, _ := json.Marshal(u)
	return b
}

func (a *answer) chunk(d deltaJSON, finish *string) chunkJSON {
	c := chunkJSON{
		ID: a.id, Object: "chat.completion.chunk", Created: created, Model: a.model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}},
	}
	if a.includeUsage {
		c.Usage = json.RawMessage("null")
	}
	return c
}

// stream writes the reply as server-sent events.
func (a *answer) stream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		_, _ = w.Write([]byte("data: "))
		_, _ = w.Write(b)
		_, _ = w.Write([]byte("\n\n"))
		if flusher != nil {
			flusher.Flush()
		}
	}
	empty := ""
	send(a.chunk(deltaJSON{Role: "assistant", Content: &empty}, nil))

	switch a.reply.Fault {
	case FaultDropStream:
		cut(w)
		return
	case FaultDropAfterContent:
		switch {
		case a.reply.Content != "":
			first := pieces(a.reply.Content, pieceBytes)[0]
			send(a.chunk(deltaJSON{Content: &first}, nil))
		case len(a.reply.ToolCalls) > 0:
			send(a.chunk(deltaJSON{ToolCalls: []toolCallDelta{a.callHeader(0)}}, nil))
		default:
			dots := "…"
			send(a.chunk(deltaJSON{Content: &dots}, nil))
		}
		cut(w)
		return
	}

	for _, p := range pieces(a.reply.Reasoning, pieceBytes) {
		send(a.chunk(deltaJSON{ReasoningContent: &p}, nil))
	}
	for _, p := range pieces(a.reply.Content, pieceBytes) {
		send(a.chunk(deltaJSON{Content: &p}, nil))
	}
	for i, tc := range a.reply.ToolCalls {
		send(a.chunk(deltaJSON{ToolCalls: []toolCallDelta{a.callHeader(i)}}, nil))
		size := max(1, (len(tc.Arguments)+2)/3)
		for _, p := range pieces(tc.Arguments, size) {
			var d toolCallDelta
			d.Index = i
			d.Function.Arguments = p
			send(a.chunk(deltaJSON{ToolCalls: []toolCallDelta{d}}, nil))
		}
	}
	fr := a.finishReason()
	send(a.chunk(deltaJSON{}, &fr))
	if a.includeUsage {
		send(chunkJSON{
			ID: a.id, Object: "chat.completion.chunk", Created: created, Model: a.model,
			Choices: []chunkChoice{}, Usage: a.usageJSON(),
		})
	}
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
	if flusher != nil {
		flusher.Flush()
	}
}

// callHeader is the first delta of tool call i: its id and name with empty
// arguments.
func (a *answer) callHeader(i int) toolCallDelta {
	var d toolCallDelta
	d.Index = i
	d.ID = a.reply.ToolCalls[i].ID
	d.Type = "function"
	d.Function.Name = a.reply.ToolCalls[i].Name
	return d
}

// json writes the reply as a single chat.completion object.
func (a *answer) json(w http.ResponseWriter) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type message struct {
		Role             string  `json:"role"`
		Content          *string `json:"content"`
		ReasoningContent string  `json:"reasoning_content,omitempty"`
		ToolCalls        []call  `json:"tool_calls,omitempty"`
	}
	msg := message{Role: "assistant", ReasoningContent: a.reply.Reasoning}
	if a.reply.Content != "" || len(a.reply.ToolCalls) == 0 {
		c := a.reply.Content
		msg.Content = &c
	}
	for _, tc := range a.reply.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: tc.ID, Type: "function", Function: fn{Name: tc.Name, Arguments: tc.Arguments}})
	}
	fr := a.finishReason()
	body := struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []any           `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
	}{
		ID: a.id, Object: "chat.completion", Created: created, Model: a.model,
		Choices: []any{map[string]any{"index": 0, "message": msg, "finish_reason": fr}},
		Usage:   a.usageJSON(),
	}
	b, err := json.Marshal(body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "", "llmtest: could not encode the reply.")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	switch a.reply.Fault {
	case FaultDropStream:
		cut(w)
		return
	case FaultDropAfterContent:
		_, _ = w.Write(b[:len(b)/2])
		cut(w)
		return
	}
	_, _ = w.Write(b)
}

// cut closes the client connection abruptly, after flushing what was
// written, so the client sees a truncated body.
func cut(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Without a hijackable connection the documented way to abort a
	// response is this sentinel panic, which net/http recovers silently.
	panic(http.ErrAbortHandler)
}

// pieces splits s into consecutive pieces of at most n bytes without
// splitting a UTF-8 sequence. It returns nil for an empty s.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	n = max(n, utf8.UTFMax)
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
