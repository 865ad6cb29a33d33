package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// writeCounter counts what a handler managed to write and remembers the
// first write error (the client closing the connection).
type writeCounter struct {
	w       http.ResponseWriter
	written int64
	err     error
}

func (c *writeCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.written += int64(n)
	if err == nil {
		err = http.NewResponseController(c.w).Flush()
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// served is what one handler run wrote.
type served struct {
	written int64
	err     error
}

// rawServer answers every request with status and whatever body writes,
// until body returns or a write fails, and reports each run on the
// returned channel.
func rawServer(t *testing.T, status int, body func(w io.Writer) error) (*httptest.Server, <-chan served) {
	t.Helper()
	done := make(chan served, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		wc := &writeCounter{w: w}
		_ = body(wc)
		done <- served{written: wc.written, err: wc.err}
	}))
	t.Cleanup(hs.Close)
	return hs, done
}

// countingTransport counts the response body bytes the client reads.
type countingTransport struct {
	base http.RoundTripper
	read atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if resp != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// countedModel returns a model for hs whose body reads are counted.
func countedModel(hs *httptest.Server, edit ...func(*Config)) (*OpenAI, *countingTransport) {
	ct := &countingTransport{base: http.DefaultTransport}
	cfg := Config{
		BaseURL: hs.URL + "/v1", HTTPClient: &http.Client{Transport: ct},
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	}
	for _, e := range edit {
		e(&cfg)
	}
	return NewOpenAI(cfg), ct
}

// waitServed returns the next handler run, failing the test if none ends
// before the test deadline.
func waitServed(t *testing.T, done <-chan served) served {
	t.Helper()
	select {
	case s := <-done:
		return s
	case <-time.After(testDeadline):
		t.Fatal("the server kept writing: the client never closed the stream")
		return served{}
	}
}

const chunkHead = `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`

// streamBytes writes events until total bytes of payload were sent, each
// made by event from a piece of payload of at most piece bytes.
func streamBytes(w io.Writer, total, piece int, event func(i int, text string) string) error {
	text := strings.Repeat("x", piece)
	for i, sent := 0, 0; sent < total; i++ {
		if _, err := io.WriteString(w, event(i, text)); err != nil {
			return err
		}
		sent += piece
	}
	_, err := io.WriteString(w, chunkHead+`{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	return err
}

func TestHugeToolArgumentsAreStopped(t *testing.T) {
	const total = 20 << 20
	hs, done := rawServer(t, http.StatusOK, func(w io.Writer) error {
		return streamBytes(w, total, 16<<10, func(i int, text string) string {
			if i == 0 {
				return chunkHead + `{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":""}}]}}]}` + "\n\n"
			}
			return chunkHead + `{"tool_calls":[{"index":0,"function":{"arguments":"` + text + `"}}]}}]}` + "\n\n"
		})
	})
	m, ct := countedModel(hs)
	_, err := m.Stream(guardCtx(t), userRequest("write it"), Callbacks{})
	if !errors.Is(err, ErrReplyTooLarge) || IsRetryable(err) {
		t.Fatalf("err = %v, want a non-retryable ErrReplyTooLarge", err)
	}
	want := `the reply was stopped because the arguments of tool call "write_file" passed the 512 KiB limit; ask the model for a shorter answer, for example to write a large file in several steps`
	if err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err, want)
	}
	s := waitServed(t, done)
	if s.err == nil || s.written >= total {
		t.Errorf("the server wrote all %d bytes without an error: the client kept reading", s.written)
	}
	if n := ct.read.Load(); n > DefaultMaxToolCallBytes+128<<10 {
		t.Errorf("the client read %d bytes of the body, want little more than the %d-byte cap", n, DefaultMaxToolCallBytes)
	}
}

func TestHugeContentIsStopped(t *testing.T) {
	const total = 50 << 20
	hs, done := rawServer(t, http.StatusOK, func(w io.Writer) error {
		return streamBytes(w, total, 8<<10, func(i int, text string) string {
			return chunkHead + `{"content":"` + text + `"}}]}` + "\n\n"
		})
	})
	m, ct := countedModel(hs)
	var shown atomic.Int64
	_, err := m.Stream(guardCtx(t), userRequest("talk"), Callbacks{OnDelta: func(d Delta) { shown.Add(int64(len(d.Content))) }})
	if !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "passed the 1 MiB limit") {
		t.Fatalf("err = %v, want ErrReplyTooLarge at the 1 MiB reply cap", err)
	}
	if n := shown.Load(); n > DefaultMaxReplyBytes {
		t.Errorf("%d bytes were passed to OnDelta, more than the %d-byte cap", n, DefaultMaxReplyBytes)
	}
	if s := waitServed(t, done); s.err == nil {
		t.Errorf("the server wrote all %d bytes: the client kept reading", s.written)
	}
	if n := ct.read.Load(); n > DefaultMaxReplyBytes+128<<10 {
		t.Errorf("the client read %d bytes, want little more than the cap", n)
	}
}

func TestOneHugeLineIsStopped(t *testing.T) {
	const total = 20 << 20
	hs, done := rawServer(t, http.StatusOK, func(w io.Writer) error {
		if _, err := io.WriteString(w, chunkHead+`{"content":"`); err != nil {
			return err
		}
		block := strings.Repeat("y", 64<<10)
		for sent := 0; sent < total; sent += len(block) {
			if _, err := io.WriteString(w, block); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "\"}}]}\n\n")
		return err
	})
	m, ct := countedModel(hs)
	_, err := m.Stream(guardCtx(t), userRequest("talk"), Callbacks{})
	if !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "one line of the stream passed the 2.1 MiB limit") {
		t.Fatalf("err = %v, want ErrReplyTooLarge for the line", err)
	}
	if s := waitServed(t, done); s.err == nil {
		t.Errorf("the server wrote all %d bytes: the client kept reading", s.written)
	}
	line := Config{}.withDefaults().replyLimits().wire().line
	if n := ct.read.Load(); n > line+64<<10 {
		t.Errorf("the client read %d bytes, want at most about one line cap (%d)", n, line)
	}
}

func TestLinesWithoutDataAreCapped(t *testing.T) {
	// go-openai keeps every line that is not a data line until the stream
	// ends; 64 KiB comment lines would otherwise pile up to 300 of them
	// per event.
	hs, done := rawServer(t, http.StatusOK, func(w io.Writer) error {
		line := ": " + strings.Repeat("z", 64<<10) + "\n"
		for range 1000 {
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
		}
		return nil
	})
	m, ct := countedModel(hs)
	_, err := m.Stream(guardCtx(t), userRequest("talk"), Callbacks{})
	if !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "more than 1 MiB of lines that carry no data") {
		t.Fatalf("err = %v, want ErrReplyTooLarge for the comment lines", err)
	}
	waitServed(t, done)
	if n := ct.read.Load(); n > DefaultMaxReplyBytes+128<<10 {
		t.Errorf("the client read %d bytes, want little more than the cap", n)
	}
}

func TestEndlessEmptyEventsAreStopped(t *testing.T) {
	hs, done := rawServer(t, http.StatusOK, func(w io.Writer) error {
		for {
			if _, err := io.WriteString(w, chunkHead+"{}}]}\n\n"); err != nil {
				return err
			}
		}
	})
	m, _ := countedModel(hs, func(c *Config) { c.MaxReplyBytes = 16 << 10 })
	_, err := m.Stream(guardCtx(t), userRequest("talk"), Callbacks{})
	if !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "the server sent more than 1 MiB for it") {
		t.Fatalf("err = %v, want ErrReplyTooLarge for the whole body", err)
	}
	waitServed(t, done)
}

func TestHugeErrorBodyIsCutAndStillClassified(t *testing.T) {
	hs, done := rawServer(t, http.StatusInternalServerError, func(w io.Writer) error {
		block := strings.Repeat("<p>internal error</p>", 1000)
		for range 1000 {
			if _, err := io.WriteString(w, block); err != nil {
				return err
			}
		}
		return nil
	})
	m, ct := countedModel(hs, func(c *Config) { c.MaxAttempts = 2 })
	var rec recorder
	_, err := m.Stream(guardCtx(t), userRequest("hi"), rec.callbacks())
	var api *APIError
	if !errors.As(err, &api) || api.Status != 500 || len([]rune(api.Message)) > 301 {
		t.Fatalf("err = %v, want an HTTP 500 APIError with a short message", err)
	}
	if len(rec.retries) != 1 {
		t.Errorf("retries = %+v, want the 500 retried once", rec.retries)
	}
	waitServed(t, done)
	waitServed(t, done)
	if n := ct.read.Load(); n > 2*(maxErrorBody+8<<10) {
		t.Errorf("the client read %d bytes of two error answers, want at most about %d each", n, maxErrorBody)
	}
}

func TestAssemblerNeverKeepsMoreThanTheCap(t *testing.T) {
	a := newAssembler(replyLimits{reply: 100, call: 40})
	content := func(n int) []byte {
		return fmt.Appendf(nil, `{"choices":[{"index":0,"delta":{"content":%q}}]}`, strings.Repeat("c", n))
	}
	if err := a.add(content(60), Callbacks{}, ""); err != nil {
		t.Fatal(err)
	}
	if err := a.add(content(41), Callbacks{}, ""); !errors.Is(err, ErrReplyTooLarge) {
		t.Fatalf("err = %v, want ErrReplyTooLarge at 101 bytes", err)
	}
	if a.content.Len() != 60 || a.size != 60 {
		t.Errorf("kept %d bytes (size %d) after a refused chunk, want 60", a.content.Len(), a.size)
	}
	call := func(idx int, args string) []byte {
		return fmt.Appendf(nil, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"name":"f","arguments":%q}}]}}]}`, idx, args)
	}
	if err := a.add(call(0, strings.Repeat("a", 41)), Callbacks{}, ""); !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), `tool call "f"`) {
		t.Errorf("err = %v, want the tool call cap", err)
	}
	if err := a.add(call(1, strings.Repeat("a", 40)), Callbacks{}, ""); !errors.Is(err, ErrReplyTooLarge) {
		t.Errorf("err = %v, want the reply cap (60 + 1 + 40 > 100)", err)
	}
	if a.size > 100 {
		t.Errorf("size %d passed the cap", a.size)
	}
}

func TestAssemblerCapsToolCallCount(t *testing.T) {
	a := newAssembler(Config{}.withDefaults().replyLimits())
	var err error
	for i := 0; i <= MaxToolCalls && err == nil; i++ {
		err = a.add(fmt.Appendf(nil, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"name":"f"}}]}}]}`, i), Callbacks{}, "")
	}
	if !errors.Is(err, ErrReplyTooLarge) || len(a.calls) != MaxToolCalls {
		t.Errorf("err = %v with %d calls, want ErrReplyTooLarge at %d calls", err, len(a.calls), MaxToolCalls)
	}
}

func TestLineScan(t *testing.T) {
	s := &lineScan{lim: wireLimits{line: 20, side: 10, total: 100}}
	if err := s.feed([]byte("data: {\"a\":1}\r\n\r\n  data:x\n: ok\n")); err != nil {
		t.Fatalf("ordinary lines refused: %v", err)
	}
	if s.side != 4 {
		t.Errorf("side bytes = %d, want 4 (\": ok\")", s.side)
	}
	// A data prefix split across reads is still a data line.
	for _, p := range []string{"da", "ta: 0123456789012", "\n"} {
		if err := s.feed([]byte(p)); err != nil {
			t.Fatalf("split data line refused: %v", err)
		}
	}
	if err := s.feed([]byte("event: 1234567\n")); !errors.Is(err, ErrReplyTooLarge) {
		t.Errorf("err = %v, want the side cap", err)
	}
	s = &lineScan{lim: wireLimits{line: 20, side: 10, total: 100}}
	if err := s.feed([]byte("data: " + strings.Repeat("x", 15))); !errors.Is(err, ErrReplyTooLarge) {
		t.Errorf("err = %v, want the line cap", err)
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 512 << 10: "512 KiB", 2<<20 + 64<<10: "2.1 MiB", 100: "100 bytes"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
