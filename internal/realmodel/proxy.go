package realmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Timings is llama-server's own account of one request (the "timings"
// object of its answer): CacheN prompt tokens taken from its prompt
// cache, PromptN evaluated afresh, PredictedN generated.
type Timings struct {
	CacheN      int     `json:"cache_n"`
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
}

// Usage is the usage object of an answer as llama-server sends it.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// Call is one tool call of an answer, assembled from its deltas.
type Call struct {
	ID, Name, Arguments string
}

// Exchange is one request through the proxy and what came back.
type Exchange struct {
	N        int       // 1 for the first request through the proxy
	Start    time.Time // when the request arrived
	Duration time.Duration
	Method   string
	Path     string
	Request  []byte // the body as Tally sent it
	Status   int    // the server's HTTP status (502 when it could not be reached)
	Stream   bool   // the answer was an event stream
	Chunks   int    // data events of a stream
	Content  string
	Calls    []Call
	Finish   string
	Usage    *Usage
	Timings  *Timings
	// Fault is what the proxy broke in this answer, "" for none.
	Fault Fault
	// Err says why the exchange failed or could not be read, "" when
	// it did not.
	Err string
}

// Chat reports whether e is a chat-completions request.
func (e Exchange) Chat() bool { return strings.HasSuffix(e.Path, "/chat/completions") }

// Fault is a way the proxy breaks a tool call of a real answer before
// Tally sees it, keeping llama-server's stream shape otherwise.
type Fault string

// The faults.
const (
	// FaultUnknownTool renames the first call to a tool that does not exist.
	FaultUnknownTool Fault = "unknown tool"
	// FaultBadJSON makes the first call's arguments invalid JSON.
	FaultBadJSON Fault = "arguments not JSON"
	// FaultNoArguments makes the first call a read_file without the path
	// it requires: its name becomes read_file, its arguments {}. (SmolLM2
	// calls list_dir, whose one argument is optional, so {} alone would
	// still be a valid call.)
	FaultNoArguments Fault = "required argument missing"
)

// Proxy forwards every request to Target and records each exchange,
// streaming answers through as they arrive.
type Proxy struct {
	// Target is the server's root URL (no /v1).
	Target string

	client *http.Client
	mu     sync.Mutex
	log    []Exchange
	faults []Fault // to put into the next answers with a tool call, in order
}

// Break queues faults: each of the next chat answers that has a tool
// call gets the first fault still queued in its first call. An answer
// without a tool call is passed on unchanged and leaves the queue as it
// is.
func (p *Proxy) Break(faults ...Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, faults...)
}

// Pending is how many queued faults found no tool call yet.
func (p *Proxy) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.faults)
}

// NewProxy returns a proxy to target.
func NewProxy(target string) *Proxy {
	return &Proxy{Target: strings.TrimRight(target, "/"), client: &http.Client{}}
}

// Exchanges returns a copy of what was recorded so far, oldest first.
func (p *Proxy) Exchanges() []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Exchange(nil), p.log...)
}

// Since returns the exchanges recorded after the first n.
func (p *Proxy) Since(n int) []Exchange {
	all := p.Exchanges()
	if n > len(all) {
		return nil
	}
	return all[n:]
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := Exchange{Start: time.Now(), Method: r.Method, Path: r.URL.Path}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "the proxy could not read the request", http.StatusBadRequest)
		return
	}
	e.Request = body
	var fault Fault
	if e.Chat() {
		p.mu.Lock()
		if len(p.faults) > 0 {
			fault = p.faults[0]
		}
		p.mu.Unlock()
	}
	defer func() {
		e.Duration = time.Since(e.Start)
		p.mu.Lock()
		e.N = len(p.log) + 1
		p.log = append(p.log, e)
		p.mu.Unlock()
	}()
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.Target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		e.Status, e.Err = http.StatusBadGateway, err.Error()
		http.Error(w, err.Error(), e.Status)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := p.client.Do(out)
	if err != nil {
		e.Status, e.Err = http.StatusBadGateway, err.Error()
		http.Error(w, "the proxy could not reach llama-server", e.Status)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length") // a corrupted answer changes length
	w.WriteHeader(resp.StatusCode)
	e.Status = resp.StatusCode
	e.Stream = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if !e.Stream {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			e.Err = err.Error()
		}
		_, _ = w.Write(b)
		if e.Chat() && resp.StatusCode == http.StatusOK {
			e.readWhole(b)
		}
		return
	}
	flusher, _ := w.(http.Flusher)
	st := &streamState{fault: fault}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	done := false // the stream's [DONE] went by: a client that hangs up now lost nothing
	for sc.Scan() {
		line := sc.Bytes()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			if bytes.Equal(data, []byte("[DONE]")) {
				done = true
			} else {
				e.Chunks++
				line = append([]byte("data: "), st.chunk(&e, data)...)
			}
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			if !done {
				e.Err = "tally stopped reading: " + err.Error()
			}
			break
		}
		if len(line) == 0 && flusher != nil {
			flusher.Flush()
		}
	}
	if err := sc.Err(); err != nil && !done {
		e.Err = err.Error()
	}
	if flusher != nil {
		flusher.Flush()
	}
	e.Calls = st.calls()
	if st.applied {
		e.Fault = fault
		p.mu.Lock()
		p.faults = p.faults[1:]
		p.mu.Unlock()
	}
}

// wireDelta is the part of a streamed chunk the proxy reads.
type wireDelta struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *Usage   `json:"usage"`
	Timings *Timings `json:"timings"`
}

// streamState assembles a streamed answer and applies its fault.
type streamState struct {
	fault   Fault
	applied bool
	byIndex map[int]*Call
	order   []int
}

func (s *streamState) calls() []Call {
	var out []Call
	for _, i := range s.order {
		out = append(out, *s.byIndex[i])
	}
	return out
}

// chunk reads one data event into e and returns the event to pass on,
// changed when it carries the part of the first tool call the fault
// breaks.
func (s *streamState) chunk(e *Exchange, data []byte) []byte {
	var c wireDelta
	if err := json.Unmarshal(data, &c); err != nil {
		e.Err = "a stream event is not JSON: " + err.Error()
		return data
	}
	if c.Usage != nil {
		e.Usage = c.Usage
	}
	if c.Timings != nil {
		e.Timings = c.Timings
	}
	if len(c.Choices) == 0 {
		return data
	}
	ch := c.Choices[0]
	if ch.Delta.Content != nil {
		e.Content += *ch.Delta.Content
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		e.Finish = *ch.FinishReason
	}
	if s.byIndex == nil {
		s.byIndex = map[int]*Call{}
	}
	for _, tc := range ch.Delta.ToolCalls {
		call, ok := s.byIndex[tc.Index]
		if !ok {
			call = &Call{}
			s.byIndex[tc.Index] = call
			s.order = append(s.order, tc.Index)
		}
		if tc.ID != "" {
			call.ID = tc.ID
		}
		call.Name += tc.Function.Name
		call.Arguments += tc.Function.Arguments
	}
	if s.fault == "" || len(ch.Delta.ToolCalls) == 0 || ch.Delta.ToolCalls[0].Index != s.order[0] {
		return data
	}
	return s.corrupt(data)
}

// corrupt applies the fault to an event carrying the first tool call:
// its name (unknown tool) or its arguments (the first piece made
// invalid JSON; every piece dropped and {} sent once instead).
func (s *streamState) corrupt(data []byte) []byte {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	choices, _ := m["choices"].([]any)
	choice, _ := choices[0].(map[string]any)
	delta, _ := choice["delta"].(map[string]any)
	calls, _ := delta["tool_calls"].([]any)
	call, _ := calls[0].(map[string]any)
	fn, _ := call["function"].(map[string]any)
	if fn == nil {
		return data
	}
	switch s.fault {
	case FaultUnknownTool:
		if name, _ := fn["name"].(string); name != "" {
			fn["name"] = name + "_v2"
			s.applied = true
		}
	case FaultBadJSON:
		if args, _ := fn["arguments"].(string); args != "" && !s.applied {
			fn["arguments"] = "{'" + args
			s.applied = true
		}
	case FaultNoArguments:
		if name, _ := fn["name"].(string); name != "" {
			fn["name"] = "read_file"
		}
		if _, ok := fn["arguments"]; ok {
			if s.applied {
				fn["arguments"] = ""
			} else {
				fn["arguments"] = "{}"
				s.applied = true
			}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return data
	}
	return b
}

// readWhole reads a non-streamed chat answer into e.
func (e *Exchange) readWhole(b []byte) {
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage   *Usage   `json:"usage"`
		Timings *Timings `json:"timings"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		e.Err = "the answer is not JSON: " + err.Error()
		return
	}
	e.Usage, e.Timings = c.Usage, c.Timings
	if len(c.Choices) == 0 {
		return
	}
	ch := c.Choices[0]
	e.Finish = ch.FinishReason
	if ch.Message.Content != nil {
		e.Content = *ch.Message.Content
	}
	for _, tc := range ch.Message.ToolCalls {
		e.Calls = append(e.Calls, Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
}
