package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults for the zero values in Config.
const (
	DefaultMaxAttempts = 5
	DefaultBaseDelay   = time.Second
	DefaultMaxDelay    = 30 * time.Second
)

// backoff returns the wait before the attempt after failed attempt n
// (1-based): a uniformly random duration in [0, min(maxDelay,
// base*2^(n-1))] ("full jitter").
func backoff(n int, base, maxDelay time.Duration, rnd func() float64) time.Duration {
	ceiling := base
	for i := 1; i < n && ceiling < maxDelay; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, maxDelay)
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rnd() * float64(ceiling+1))
}

// parseRetryAfter reads the wait a server asked for from the Retry-After
// header (seconds or an HTTP date) or the retry-after-ms header some
// OpenAI-compatible servers send. ok is false when neither is usable.
func parseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// sleepCtx waits for d or until ctx is done, whichever comes first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryReason describes err in a few words for Retry.Reason.
func retryReason(err error) (reason string, status int) {
	var api *APIError
	var cut *cutError
	var te *timeoutError
	switch {
	case errors.As(err, &te):
		return te.reason(), 0
	case errors.As(err, &api) && api.Status == http.StatusTooManyRequests:
		return "rate limited (HTTP 429)", api.Status
	case errors.As(err, &api):
		return fmt.Sprintf("server error (HTTP %d)", api.Status), api.Status
	case errors.As(err, &cut):
		return "stream cut before any output", 0
	case errors.Is(err, ErrUnreachable):
		return "could not connect", 0
	}
	return "transient failure", 0
}

// defaultRand is the jitter source.
func defaultRand() float64 { return rand.Float64() }
