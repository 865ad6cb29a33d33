package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// llama-server says the window of its slot in /props.
func TestServerWindowFromProps(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithContextWindow(8192), llmtest.WithAPIKey("local"))
	defer srv.Close()
	n, from, err := ServerWindow(context.Background(), Config{BaseURL: srv.URL(), APIKey: "local"}, "smollm2")
	if err != nil || n != 8192 || from != "/props" {
		t.Fatalf("ServerWindow = %d, %q, %v; want 8192 from /props", n, from, err)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("reading the window made %d chat requests", len(srv.Requests()))
	}
}

// A server without /props that lists its models with a window: the meta
// of llama-server's entries (n_ctx, not n_ctx_train), vLLM's
// max_model_len; the entry of the model asked for, or the only one.
func TestServerWindowFromModels(t *testing.T) {
	cases := []struct {
		name, models, model string
		want                int
	}{
		{"llama.cpp meta", `{"data":[{"id":"a","meta":{"n_ctx":4096,"n_ctx_train":8192}}]}`, "a", 4096},
		{"vLLM", `{"data":[{"id":"x","max_model_len":100},{"id":"qwen","max_model_len":32768}]}`, "qwen", 32768},
		{"alias", `{"data":[{"id":"file.gguf","aliases":["smol"],"meta":{"n_ctx":2048}},{"id":"b"}]}`, "smol", 2048},
		{"only model", `{"data":[{"id":"served","max_model_len":16384}]}`, "other-name", 16384},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/models" {
					http.NotFound(w, r)
					return
				}
				fmt.Fprint(w, c.models)
			}))
			defer ts.Close()
			n, from, err := ServerWindow(context.Background(), Config{BaseURL: ts.URL + "/v1"}, c.model)
			if err != nil || n != c.want {
				t.Fatalf("ServerWindow = %d, %q, %v; want %d", n, from, err, c.want)
			}
		})
	}
}

// A server that says nothing of its window (OpenAI's API, the scripted
// server by default) gives ErrNoWindow; a host that is not there gives
// ErrUnreachable, quickly.
func TestServerWindowUnknown(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	_, _, err := ServerWindow(context.Background(), Config{BaseURL: srv.URL()}, "m")
	if !errors.Is(err, ErrNoWindow) {
		t.Fatalf("err = %v, want ErrNoWindow", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, _, err = ServerWindow(context.Background(), Config{BaseURL: "http://" + addr + "/v1", APIKey: "sk-secret"}, "m")
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("an absent host took %s", d)
	}
	if _, _, err := ServerWindow(context.Background(), Config{BaseURL: "not a url"}, "m"); err == nil {
		t.Error("a base URL that is not one was accepted")
	}
}
