package llm

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/chat"
)

// Ping checks that the backend described by cfg is reachable, accepts the
// API key and knows model, by making one tiny chat call (max_tokens 1,
// no retries). It returns the round-trip time of that call.
//
// The error says which check failed: errors.Is(err, ErrUnreachable) for a
// host that cannot be reached ("cannot reach <host>: ...; check the
// base URL ..."), IsUnauthorized for a rejected API key, IsModelNotFound
// for an unknown model, errors.Is(err, ErrTimeout) for a server that took
// longer than one of cfg's timeouts (a connect timeout also matches
// ErrUnreachable); anything else is returned as is. A caller that wants a
// quick answer sets a short cfg.FirstByteTimeout or a context deadline.
func Ping(ctx context.Context, cfg Config, model string) (time.Duration, error) {
	if strings.TrimSpace(model) == "" {
		return 0, errors.New("no model is set; choose a model before testing the connection")
	}
	cfg.MaxAttempts = 1
	m := NewOpenAI(cfg)
	start := time.Now()
	_, err := m.Stream(ctx, Request{
		Model:     model,
		Messages:  []chat.Message{{Role: chat.RoleUser, Content: "ping"}},
		MaxTokens: 1,
	}, Callbacks{})
	if err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
