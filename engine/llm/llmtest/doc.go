// Package llmtest provides a scripted OpenAI-compatible chat-completions
// server for tests.
//
// A Server listens on a local port (net/http/httptest), so the code under
// test talks to it over real HTTP with its real client. Each accepted
// request is answered by a Script, which can also inject faults (HTTP 429
// and 500, dropped streams, context-length errors). Before the script sees
// a request the server validates it the way strict backends do: a system
// message anywhere but first, an assistant tool call without exactly one
// matching tool result, a tool result without a matching call, an empty
// message list or an unknown role are all answered with HTTP 400 and an
// OpenAI-style error body.
//
// Content may be a string or an array of parts; image_url parts are
// recorded (Message.Images), a data: URL decoded to its bytes, and are
// refused with HTTP 400, as OpenAI does, outside user messages, without a
// url, or with a data URL that is not base64 of an image type.
//
// Every request is rendered through a real Hugging Face chat template
// (Qwen3.5 by default, DeepSeek-V4 on request) and tokenized with a cheap
// deterministic tokenizer. The server simulates a provider prefix cache on
// the rendered tokens, per model, with one of two rules (WithCacheRule).
// Under CacheLCP, the default, the cache hit of a request is its longest
// common token prefix with any earlier accepted request for the same
// model, rounded down to the cache unit (64 tokens by default). CacheUnits
// follows DeepSeek V4's context-caching guide instead: a request hits only
// a whole persisted prefix unit, and after each request units are
// persisted at the end of its input, at the end of its output, at its
// common prefix with the previous request and at fixed token intervals
// (WithUnitInterval); so A+B then A+B+C hits A+B, while A+B then A+C
// misses and a third request A+D hits A. Hits and misses are reported in
// usage both DeepSeek style (prompt_cache_hit_tokens,
// prompt_cache_miss_tokens) and OpenAI style
// (prompt_tokens_details.cached_tokens), and recorded per request together
// with an "ideal" hit (see Stats) so tests can measure how cache-friendly a
// client's prompts are.
//
//	srv := llmtest.New(llmtest.Sequence(
//		llmtest.Reply{Fault: llmtest.Fault429},
//		llmtest.Text("hello"),
//	))
//	defer srv.Close()
//	// point the client at srv.URL() ...
package llmtest
