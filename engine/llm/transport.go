package llm

import (
	"context"
	"io"
	"net/http"
)

// attemptInfo is shared between one attempt and the transport serving it.
// The transport only writes it from within RoundTrip, which returns before
// the attempt reads it, so no locking is needed.
type attemptInfo struct {
	body *body // the body assembly of the call (see body.go), or nil

	header http.Header // response headers of the last round trip
	status int
}

type attemptKey struct{}

func withAttempt(ctx context.Context, info *attemptInfo) context.Context {
	return context.WithValue(ctx, attemptKey{}, info)
}

// transport wraps the caller's RoundTripper to do what go-openai cannot:
// send a body from cached encodings, with an explicit zero temperature and
// a prompt-cache key, and expose the response headers of failed requests
// (for Retry-After).
//
// The body of a chat call is written in one step after go-openai built
// it, the body assembly (body.go), and nowhere else. go-openai marshals
// the whole request, every message, on every call, has no field for
// "prompt_cache_key", and drops a temperature of 0: v1.43's
// ChatCompletionRequest.Temperature is a float32 tagged omitempty, so the
// server would apply its own default (1 for OpenAI and DeepSeek) instead.
// The library has no pointer field, no extra-body hook on chat requests
// and no way to replace its JSON marshaller (upstream issues
// sashabaranov/go-openai#9 and #678 are open; the fixes #922 and #983 are
// unmerged), and the usual workaround, math.SmallestNonzeroFloat32, would
// send a different number. So go-openai is given the request with a
// placeholder message list (and tool list), and the transport writes the
// body with the real arrays in their place, from encodings made once,
// adding "temperature":0 as the first member when exactly 0 was asked for
// and "prompt_cache_key" as the last when a key was given. Everything
// else is go-openai's, and the messages and tools are byte for byte what
// go-openai would have written for them (TestBodyMatchesGoOpenAI), so the
// body equals go-openai's own apart from those two members. Bodies of
// other calls pass through untouched.
type transport struct {
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	info, _ := req.Context().Value(attemptKey{}).(*attemptInfo)
	if info != nil && info.body != nil && req.Body != nil {
		built, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body, err := info.body.assemble(built)
		if err != nil {
			return nil, err
		}
		r2 := req.Clone(req.Context())
		r2.Body = io.NopCloser(body)
		r2.ContentLength = int64(body.Len())
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.again()), nil }
		req = r2
	}
	resp, err := t.base.RoundTrip(req)
	if info != nil && resp != nil {
		info.header = resp.Header.Clone()
		info.status = resp.StatusCode
	}
	return resp, err
}

// withTransport returns a copy of c (or of a default client) whose
// transport is wrap applied to c's (or the default) transport.
func withTransport(c *http.Client, wrap func(base http.RoundTripper) http.RoundTripper) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = wrap(base)
	return &cp
}

// wrapClient returns a copy of c whose transport is wrapped.
func wrapClient(c *http.Client) *http.Client {
	return withTransport(c, func(base http.RoundTripper) http.RoundTripper { return &transport{base: base} })
}
