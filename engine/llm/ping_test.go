package llm

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

func TestPing(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithAPIKey("sk-good"), llmtest.WithModels([]string{"m1"}))
	defer srv.Close()
	ctx := context.Background()

	lat, err := Ping(ctx, Config{BaseURL: srv.URL(), APIKey: "sk-good"}, "m1")
	if err != nil || lat <= 0 {
		t.Fatalf("Ping = %v, %v", lat, err)
	}
	r := srv.Requests()[0]
	if r.MaxTokens != 1 {
		t.Errorf("ping sent max_tokens %d, want 1", r.MaxTokens)
	}

	_, err = Ping(ctx, Config{BaseURL: srv.URL(), APIKey: "sk-bad"}, "m1")
	if !IsUnauthorized(err) {
		t.Errorf("bad key: err = %v", err)
	}
	_, err = Ping(ctx, Config{BaseURL: srv.URL(), APIKey: "sk-good"}, "m2")
	if !IsModelNotFound(err) || !strings.Contains(err.Error(), `"m2"`) {
		t.Errorf("unknown model: err = %v", err)
	}
	if _, err = Ping(ctx, Config{BaseURL: srv.URL()}, ""); err == nil {
		t.Errorf("empty model accepted")
	}
	n := len(srv.Requests())
	if n != 3 {
		t.Errorf("server saw %d requests, want 3 (no retries)", n)
	}
}

func TestPingUnreachable(t *testing.T) {
	// Reserve a port, then close it so nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Ping(context.Background(), Config{BaseURL: "http://" + addr + "/v1"}, "m")
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if !strings.HasPrefix(err.Error(), "cannot reach "+addr+": ") || !strings.Contains(err.Error(), "check the base URL") {
		t.Errorf("err text = %q", err.Error())
	}
}

func TestPingWrongPath(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	_, err := Ping(context.Background(), Config{BaseURL: strings.TrimSuffix(srv.URL(), "/v1")}, "m")
	var api *APIError
	if !errors.As(err, &api) || api.Status != 404 || IsModelNotFound(err) || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("err = %v", err)
	}
}
