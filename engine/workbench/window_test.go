package workbench

import (
	"context"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// A local llama-server with a model Tally's table does not know: a
// session takes the window the server says in /props, Test connection's
// read gives the same, and a window the user gave wins without asking.
func TestASessionTakesTheWindowALocalServerSays(t *testing.T) {
	srv := llmtest.New(nil, llmtest.WithContextWindow(8192))
	defer srv.Close()
	w := bench(t, nil)
	if err := w.SaveSettings(Settings{BaseURL: srv.URL(), Model: "smollm2"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := w.Config(SessionOptions{})
	if err != nil || cfg.ContextWindow != 8192 {
		t.Fatalf("window %d, %v; want the server's 8192", cfg.ContextWindow, err)
	}
	s := w.Settings()
	n, from, err := ServerWindow(context.Background(), s, w.ResolveWith(Flags{}, s))
	if err != nil || n != 8192 || from != "/props" {
		t.Errorf("ServerWindow = %d from %q, %v", n, from, err)
	}
	if cfg, err = w.Config(SessionOptions{Flags: Flags{ContextWindow: 4096}}); err != nil || cfg.ContextWindow != 4096 {
		t.Errorf("--context-window 4096 gave %d, %v", cfg.ContextWindow, err)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("reading the window sent %d chat requests", len(srv.Requests()))
	}
}

// A server that says no window leaves the model's known or assumed one.
func TestAServerWithoutAWindowLeavesTheTable(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	w := bench(t, nil)
	if err := w.SaveSettings(Settings{BaseURL: srv.URL(), Model: "some-local-model"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := w.Config(SessionOptions{})
	if err != nil || cfg.ContextWindow != 0 {
		t.Fatalf("window %d, %v; want 0 (the table's)", cfg.ContextWindow, err)
	}
}
