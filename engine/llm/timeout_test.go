package llm

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// tiny is the timeout the tests configure; testDeadline is the test-level
// deadline that only stops a hung test, never decides its outcome.
const (
	tiny         = 100 * time.Millisecond
	testDeadline = 30 * time.Second
)

func guardCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// silentListener accepts connections on loopback, reads whatever the client
// sends and never writes a byte.
type silentListener struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newSilentListener(t *testing.T) *silentListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	return s
}

func (s *silentListener) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func TestFirstByteTimeoutServerAcceptsAndNeverAnswers(t *testing.T) {
	ln := newSilentListener(t)
	var rec recorder
	m := NewOpenAI(Config{
		BaseURL: "http://" + ln.ln.Addr().String() + "/v1", MaxAttempts: 3, FirstByteTimeout: tiny,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	})
	_, err := m.Stream(guardCtx(t), userRequest("hi"), rec.callbacks())
	if !errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout from the client's own timer", err)
	}
	for _, want := range []string{"gave up after 3 attempts", "sent nothing for 100ms after the request (first-byte timeout)", "raise the timeout in Settings"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if len(rec.retries) != 2 || rec.retries[0].Reason != "no answer within 100ms (first-byte timeout)" || rec.retries[0].Attempt != 2 {
		t.Errorf("retries = %+v, want two announced first-byte timeouts", rec.retries)
	}
	if n := ln.accepted(); n != 3 {
		t.Errorf("server accepted %d connections, want 3", n)
	}
}

func TestStallBeforeAnswerIsRetried(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.FaultStall}, llmtest.Text("second try")))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec, func(c *Config) { c.FirstByteTimeout = tiny })
	resp, err := m.Stream(guardCtx(t), userRequest("hi"), rec.callbacks())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Content != "second try" || resp.Attempts != 2 {
		t.Errorf("got %q after %d attempts, want the second attempt's answer", resp.Content, resp.Attempts)
	}
	if len(rec.retries) != 1 || !strings.Contains(rec.retries[0].Reason, "first-byte timeout") {
		t.Errorf("retries = %+v, want one first-byte timeout", rec.retries)
	}
}

func TestHeadersWithoutBodyHitFirstByteTimeout(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply {
		return llmtest.Reply{Fault: llmtest.FaultStallAfterHeaders}
	}))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec, func(c *Config) { c.FirstByteTimeout = tiny; c.MaxAttempts = 2 })
	_, err := m.Stream(guardCtx(t), userRequest("hi"), rec.callbacks())
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "first-byte timeout") {
		t.Fatalf("err = %v, want a first-byte timeout", err)
	}
	if len(srv.Requests()) != 2 || len(rec.retries) != 1 {
		t.Errorf("%d requests, %d retries; want 2 and 1", len(srv.Requests()), len(rec.retries))
	}
}

func TestStreamStallBeforeOutputIsRetried(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Fault: llmtest.FaultStallAfterRole}, llmtest.Text("recovered")))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec, func(c *Config) { c.StreamIdleTimeout = tiny })
	req := userRequest("hi")
	zero := float32(0)
	req.Temperature = &zero
	resp, err := m.Stream(guardCtx(t), req, rec.callbacks())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Content != "recovered" || resp.Attempts != 2 {
		t.Errorf("got %q after %d attempts", resp.Content, resp.Attempts)
	}
	if len(rec.retries) != 1 || rec.retries[0].Reason != "stream stalled for 100ms (idle timeout)" {
		t.Errorf("retries = %+v, want one stalled stream", rec.retries)
	}
	// The timers wrap the transport that injects temperature 0: both
	// attempts must still carry it.
	for i, r := range srv.Requests() {
		if r.Temperature == nil || *r.Temperature != 0 {
			t.Errorf("attempt %d: temperature 0 was not sent: %s", i+1, r.Body)
		}
	}
}

func TestStreamStallAfterOutputIsNotRetried(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{Content: "A partial answer", Fault: llmtest.FaultStallAfterContent}, llmtest.Text("never")))
	defer srv.Close()
	var rec recorder
	m := newModel(srv, &rec, func(c *Config) { c.StreamIdleTimeout = tiny })
	_, err := m.Stream(guardCtx(t), userRequest("hi"), rec.callbacks())
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrStreamCut) {
		t.Fatalf("err = %v, want ErrTimeout and ErrStreamCut", err)
	}
	if IsRetryable(err) || len(rec.retries) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("a stall after shown output was retried (%d retries, %d requests)", len(rec.retries), len(srv.Requests()))
	}
	want := "the server stopped sending for 100ms after part of the answer was shown (stream idle timeout); send the request again, check the server or raise the timeout in Settings"
	if err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err, want)
	}
	if c, _ := rec.text(); c == "" {
		t.Error("the partial text was not passed on before the stall")
	}
}

func TestConnectTimeoutWhenTLSHandshakeNeverCompletes(t *testing.T) {
	ln := newSilentListener(t)
	var rec recorder
	m := NewOpenAI(Config{
		BaseURL: "https://" + ln.ln.Addr().String() + "/v1", MaxAttempts: 2,
		ConnectTimeout: tiny, FirstByteTimeout: -1,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	})
	_, err := m.Stream(guardCtx(t), userRequest("hi"), rec.callbacks())
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrUnreachable) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a connect timeout (ErrTimeout and ErrUnreachable)", err)
	}
	if !strings.Contains(err.Error(), "within 100ms (connect timeout)") {
		t.Errorf("error text = %q", err)
	}
	if len(rec.retries) != 1 || rec.retries[0].Reason != "connect timeout 100ms" {
		t.Errorf("retries = %+v, want one connect timeout", rec.retries)
	}
}

func TestTimeoutDefaultsAndOff(t *testing.T) {
	c := Config{}.withDefaults()
	if c.ConnectTimeout != DefaultConnectTimeout || c.FirstByteTimeout != DefaultFirstByteTimeout || c.StreamIdleTimeout != DefaultStreamIdleTimeout {
		t.Errorf("zero config timeouts = %v %v %v, want the defaults", c.ConnectTimeout, c.FirstByteTimeout, c.StreamIdleTimeout)
	}
	if c.MaxReplyBytes != DefaultMaxReplyBytes || c.MaxToolCallBytes != DefaultMaxToolCallBytes {
		t.Errorf("zero config caps = %d %d, want the defaults", c.MaxReplyBytes, c.MaxToolCallBytes)
	}
	c = Config{ConnectTimeout: -1, FirstByteTimeout: -time.Second, StreamIdleTimeout: 5 * time.Second, MaxReplyBytes: -1}.withDefaults()
	if c.ConnectTimeout != 0 || c.FirstByteTimeout != 0 || c.StreamIdleTimeout != 5*time.Second {
		t.Errorf("timeouts = %v %v %v, want off, off, 5s", c.ConnectTimeout, c.FirstByteTimeout, c.StreamIdleTimeout)
	}
	if c.MaxReplyBytes != DefaultMaxReplyBytes {
		t.Errorf("a negative cap was not replaced by the default: %d", c.MaxReplyBytes)
	}
}

func TestWatchOffNeverFires(t *testing.T) {
	cancelled := false
	w := &watch{cancel: func() { cancelled = true }}
	w.start(0)
	if w.timer != nil || w.activity() != nil {
		t.Fatal("a watch with both timeouts off armed a timer")
	}
	if w.close() != nil || !cancelled {
		t.Error("close did not release the request")
	}
}
