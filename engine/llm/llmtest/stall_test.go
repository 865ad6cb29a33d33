package llmtest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// streamBody is a streaming chat request body.
const streamBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

func TestFaultStallSendsNothingAndCloseEndsIt(t *testing.T) {
	srv := New(Sequence(Reply{Fault: FaultStall}))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(streamBody))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for start := time.Now(); len(srv.Requests()) == 0; time.Sleep(time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the request never reached the server")
		}
	}
	srv.Close() // must not wait for the stalled answer
	select {
	case err := <-errc:
		if err == nil {
			t.Error("the stalled request got an answer")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stalled request did not end when the server closed")
	}
	if r := srv.Requests()[0]; r.Status != 0 || r.Fault != FaultStall {
		t.Errorf("recorded status %d fault %v, want 0 and FaultStall", r.Status, r.Fault)
	}
}

func TestFaultStallAfterContentSendsFirstPiece(t *testing.T) {
	srv := New(Sequence(Reply{Content: "Hello there, this is long", Fault: FaultStallAfterContent}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(streamBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	var events []string
	for len(events) < 2 && sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			events = append(events, line)
		}
	}
	if len(events) != 2 || !strings.Contains(events[0], `"role":"assistant"`) || !strings.Contains(events[1], `"content":"Hello there,"`) {
		t.Errorf("events = %q, want the role chunk and the first piece", events)
	}
	if r := srv.Requests()[0]; r.Status != http.StatusOK {
		t.Errorf("recorded status %d, want 200", r.Status)
	}
}
