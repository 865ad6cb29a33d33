package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the timeouts in Config.
//
//   - DefaultConnectTimeout covers DNS, TCP and TLS. A live server answers
//     in well under a second even across continents; 15 s leaves room for
//     three lost SYN packets and a slow resolver.
//   - DefaultFirstByteTimeout covers the wait from sending the request to
//     the first byte of the answer, which includes prompt processing and,
//     for models that hide their reasoning, the whole thinking phase.
//     Hosted reasoning models at high effort and local servers processing
//     a long uncached prompt can take more than two minutes before their
//     first byte, so the default is three minutes; a dead server is still
//     reported within that time on every attempt, and each retry is
//     announced.
//   - DefaultStreamIdleTimeout is the longest silence allowed once bytes
//     are flowing. Streaming models send something every few tens of
//     milliseconds, and common proxies drop connections idle for 100 s, so
//     a 90 s gap means the stream is dead.
const (
	DefaultConnectTimeout    = 15 * time.Second
	DefaultFirstByteTimeout  = 3 * time.Minute
	DefaultStreamIdleTimeout = 90 * time.Second
)

// timeoutOrDefault resolves a Config timeout: 0 is the default, a negative
// value turns the timeout off (returned as 0).
func timeoutOrDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// phase is the part of a request a timeout applies to.
type phase int

const (
	phaseConnect   phase = iota // DNS, TCP and TLS
	phaseFirstByte              // from sending the request to the first body byte
	phaseIdle                   // between body bytes
)

// timeoutError is a request that the server left waiting for too long.
type timeoutError struct {
	phase phase
	limit time.Duration // 0 when the limit came from the caller's own transport
	host  string        // set by the attempt
	shown bool          // output had been passed on when the stream stalled
	cause error         // the transport's error for a connect timeout
}

func (e *timeoutError) Error() string {
	within := ""
	if e.limit > 0 {
		within = " for " + durationText(e.limit)
	}
	switch {
	case e.phase == phaseConnect:
		host := e.host
		if host == "" {
			host = "the server"
		}
		if e.limit > 0 {
			within = " within " + durationText(e.limit)
		}
		return fmt.Sprintf("could not connect to %s%s (connect timeout); check the base URL and the network, or raise the timeout in Settings", host, within)
	case e.phase == phaseFirstByte:
		return fmt.Sprintf("the server sent nothing%s after the request (first-byte timeout); check the server or raise the timeout in Settings", within)
	case e.shown:
		return fmt.Sprintf("the server stopped sending%s after part of the answer was shown (stream idle timeout); send the request again, check the server or raise the timeout in Settings", within)
	}
	return fmt.Sprintf("the server sent nothing%s (stream idle timeout); check the server or raise the timeout in Settings", within)
}

// Unwrap makes every timeout match ErrTimeout, a connect timeout also
// ErrUnreachable and a stalled stream also ErrStreamCut.
func (e *timeoutError) Unwrap() []error {
	errs := []error{ErrTimeout}
	switch e.phase {
	case phaseConnect:
		errs = append(errs, ErrUnreachable)
		if e.cause != nil {
			errs = append(errs, e.cause)
		}
	case phaseIdle:
		errs = append(errs, ErrStreamCut)
	}
	return errs
}

// at returns a copy of e naming host and saying whether output had been
// passed on.
func (e *timeoutError) at(host string, shown bool) *timeoutError {
	cp := *e
	cp.host, cp.shown = host, shown
	return &cp
}

// reason describes the timeout in a few words for Retry.Reason.
func (e *timeoutError) reason() string {
	limit := ""
	if e.limit > 0 {
		limit = " " + durationText(e.limit)
	}
	switch e.phase {
	case phaseConnect:
		return "connect timeout" + limit
	case phaseFirstByte:
		return "no answer within" + limit + " (first-byte timeout)"
	}
	return "stream stalled for" + limit + " (idle timeout)"
}

// durationText formats d as "90s" for whole seconds and as Go does
// otherwise ("100ms", "1.5s").
func durationText(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// guard is the innermost RoundTripper wrapper: it bounds how long a
// response may keep the caller waiting (first byte, then between bytes)
// and how many bytes of it are read, and labels connect timeouts. It sits
// below the temperature-injecting transport, so it sees the request that
// is actually sent and every retry gets fresh timers.
type guard struct {
	base            http.RoundTripper
	connect         time.Duration // only used to label errors; enforced by the base transport
	firstByte, idle time.Duration // 0 = off
	wire            wireLimits
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	w := &watch{cancel: cancel, idle: g.idle}
	var gotConn atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
	})
	context.AfterFunc(ctx, func() { w.close() })
	w.start(g.firstByte)
	resp, err := g.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		if fired := w.close(); fired != nil {
			return nil, fired
		}
		var ne net.Error
		if req.Context().Err() == nil && !gotConn.Load() && errors.As(err, &ne) && ne.Timeout() {
			return nil, &timeoutError{phase: phaseConnect, limit: g.connect, cause: err}
		}
		return nil, err
	}
	b := &guardBody{rc: resp.Body, w: w}
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		b.left = maxErrorBody
	} else {
		b.scan = &lineScan{lim: g.wire}
	}
	resp.Body = b
	return resp, nil
}

// watch is the timer of one request. Body reads only move the deadline;
// the timer re-arms itself for the remainder when it fires early, so a
// busy stream costs no timer resets.
type watch struct {
	mu       sync.Mutex
	timer    *time.Timer
	phase    phase
	limit    time.Duration
	idle     time.Duration
	deadline time.Time // zero: no deadline in this phase
	fired    *timeoutError
	closed   bool
	cancel   context.CancelFunc
}

// start arms the first-byte timer.
func (w *watch) start(limit time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set(phaseFirstByte, limit)
}

// set enters phase p with the given limit; w.mu must be held.
func (w *watch) set(p phase, limit time.Duration) {
	w.phase, w.limit = p, limit
	if limit <= 0 || w.closed {
		w.deadline = time.Time{}
		return
	}
	w.deadline = time.Now().Add(limit)
	if w.timer == nil {
		w.timer = time.AfterFunc(limit, w.fire)
		return
	}
	w.timer.Reset(limit)
}

// activity records that body bytes arrived. It returns the timeout that
// already fired, if any.
func (w *watch) activity() *timeoutError {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.fired != nil:
		return w.fired
	case w.phase != phaseIdle:
		w.set(phaseIdle, w.idle)
	case w.limit > 0:
		w.deadline = time.Now().Add(w.limit)
	}
	return nil
}

func (w *watch) fire() {
	w.mu.Lock()
	if w.closed || w.fired != nil || w.deadline.IsZero() {
		w.mu.Unlock()
		return
	}
	if rest := time.Until(w.deadline); rest > 0 {
		w.timer.Reset(rest)
		w.mu.Unlock()
		return
	}
	w.fired = &timeoutError{phase: w.phase, limit: w.limit}
	w.mu.Unlock()
	w.cancel()
}

// err returns the timeout that fired, if any.
func (w *watch) err() *timeoutError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// close stops the timer and releases the request; it returns the timeout
// that fired, if any. It is safe to call more than once.
func (w *watch) close() *timeoutError {
	w.mu.Lock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	fired := w.fired
	w.mu.Unlock()
	w.cancel()
	return fired
}

// guardBody is a response body read under a watch and, for a successful
// answer, a lineScan; an error answer is cut off after maxErrorBody bytes.
type guardBody struct {
	rc   io.ReadCloser
	w    *watch
	scan *lineScan // nil for an error answer
	left int64     // bytes of an error answer still to read
	err  error     // sticky failure
}

func (b *guardBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.scan == nil {
		if b.left <= 0 {
			// Read to the cap: release the connection, since go-openai
			// does not close an error answer's body.
			b.stop(io.EOF)
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), b.left)]
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		if fired := b.w.activity(); fired != nil {
			return 0, b.stop(fired)
		}
	} else if fired := b.w.err(); fired != nil {
		return 0, b.stop(fired)
	}
	if b.scan == nil {
		b.left -= int64(n)
		if err != nil {
			b.stop(err)
		}
		return n, err
	}
	if serr := b.scan.feed(p[:n]); serr != nil {
		return 0, b.stop(serr)
	}
	return n, err
}

// stop ends reading with err: later reads return it, the connection is
// closed and the timer released.
func (b *guardBody) stop(err error) error {
	b.err = err
	_ = b.rc.Close()
	b.w.close()
	return err
}

func (b *guardBody) Close() error {
	b.w.close()
	return b.rc.Close()
}

// guardedClient returns a copy of c (or of a default client) whose transport
// enforces the configured timeouts and wire limits.
func guardedClient(c *http.Client, cfg Config) *http.Client {
	return withTransport(c, func(base http.RoundTripper) http.RoundTripper {
		return &guard{
			base:      withConnectTimeout(base, cfg.ConnectTimeout),
			connect:   cfg.ConnectTimeout,
			firstByte: cfg.FirstByteTimeout,
			idle:      cfg.StreamIdleTimeout,
			wire:      cfg.replyLimits().wire(),
		}
	})
}

// withConnectTimeout returns a copy of rt whose dials and TLS handshakes are
// each bounded by d. Only an *http.Transport can be configured; any other
// RoundTripper is returned as is, and its connection phase is then bounded
// by the first-byte timeout, which runs from the start of the request.
func withConnectTimeout(rt http.RoundTripper, d time.Duration) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !ok || d <= 0 {
		return rt
	}
	t = t.Clone()
	t.TLSHandshakeTimeout = d
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return dial(ctx, network, addr)
	}
	return t
}
