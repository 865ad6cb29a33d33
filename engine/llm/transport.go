package llm

import (
	"bytes"
	"context"
	"io"
	"net/http"
)

// attemptInfo is shared between one attempt and the transport serving it.
// The transport only writes it from within RoundTrip, which returns before
// the attempt reads it, so no locking is needed.
type attemptInfo struct {
	temperatureZero bool // inject "temperature": 0 into the body

	header http.Header // response headers of the last round trip
	status int
}

type attemptKey struct{}

func withAttempt(ctx context.Context, info *attemptInfo) context.Context {
	return context.WithValue(ctx, attemptKey{}, info)
}

// transport wraps the caller's RoundTripper to do what go-openai cannot:
// send an explicit zero temperature and expose the response headers of
// failed requests (for Retry-After).
//
// The temperature is the one provider quirk for which the request body is
// rewritten after go-openai built it, and the only one: go-openai v1.43's
// ChatCompletionRequest.Temperature is a float32 tagged omitempty, so a
// temperature of 0 is dropped from the JSON and the server applies its own
// default (1 for OpenAI and DeepSeek) instead. The library has no pointer
// field, no extra-body hook on chat requests and no way to replace its
// JSON marshaller (upstream issues sashabaranov/go-openai#9 and #678 are
// open; the fixes #922 and #983 are unmerged), and the usual workaround,
// math.SmallestNonzeroFloat32, would send a different number. So for a
// request that asked for exactly 0 the transport adds "temperature":0 as
// the body's first member and changes nothing else: the messages and tools
// go out exactly as the engine assembled them. Every other body passes
// through untouched.
type transport struct {
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	info, _ := req.Context().Value(attemptKey{}).(*attemptInfo)
	if info != nil && info.temperatureZero && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = injectTemperatureZero(body)
		r2 := req.Clone(req.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req = r2
	}
	resp, err := t.base.RoundTrip(req)
	if info != nil && resp != nil {
		info.header = resp.Header.Clone()
		info.status = resp.StatusCode
	}
	return resp, err
}

// injectTemperatureZero adds "temperature":0 as the first member of a JSON
// object body. It is only used for bodies go-openai built from a request
// whose temperature is 0, which it omits (the field is omitempty), so the
// body never has a top-level temperature member already.
func injectTemperatureZero(body []byte) []byte {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return body
	}
	rest := bytes.TrimLeft(trimmed[1:], " \t\r\n")
	out := make([]byte, 0, len(body)+20)
	out = append(out, `{"temperature":0`...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
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
