package llm

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestBackoffFullJitterBounds(t *testing.T) {
	one := func() float64 { return 0.999999 }
	zero := func() float64 { return 0 }
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 60: 30 * time.Second} {
		got := backoff(n, time.Second, 30*time.Second, one)
		if got < want-time.Millisecond || got > want {
			t.Errorf("backoff(%d) at max jitter = %v, want about %v", n, got, want)
		}
		if got := backoff(n, time.Second, 30*time.Second, zero); got != 0 {
			t.Errorf("backoff(%d) at zero jitter = %v, want 0", n, got)
		}
	}
	for range 100 {
		if d := backoff(3, time.Second, 30*time.Second, defaultRand); d < 0 || d > 4*time.Second {
			t.Fatalf("backoff(3) = %v, outside [0, 4s]", d)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{}, 0, false},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(9 * time.Second).Format(http.TimeFormat)}}, 9 * time.Second, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond, true},
	} {
		got, ok := parseRetryAfter(tc.h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%v: got %v %v, want %v %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSleepCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("sleepCtx ignored cancellation")
	}
	if err := sleepCtx(context.Background(), time.Millisecond); err != nil {
		t.Errorf("err = %v", err)
	}
}
