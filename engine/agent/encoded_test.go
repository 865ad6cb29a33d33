package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
)

// checkEncodings wraps h's model so that every request the session sends
// is checked after it went out: the "messages" and "tools" the server
// received, written from the skeleton's cached encodings, are byte for
// byte json.Marshal of the request's messages and tools, what go-openai
// writes; and all messages but the open one and the status (the last two
// at most) came from the cache, so a step encodes only what is new.
func checkEncodings(t *testing.T, h *harness) {
	inner := h.cfg.Model
	h.cfg.Model = llm.Func(func(ctx context.Context, req llm.Request, cb llm.Callbacks) (*llm.Response, error) {
		want, err := json.Marshal(req.Messages)
		if err != nil {
			t.Fatal(err)
		}
		wantTools, err := json.Marshal(req.Tools)
		if err != nil {
			t.Fatal(err)
		}
		if n, c := len(req.Messages), req.Encoded.Covers(req.Messages); c < n-2 {
			t.Errorf("only %d of %d messages had a cached encoding", c, n)
		}
		before := len(h.srv.Requests())
		resp, err := inner.Stream(ctx, req, cb)
		recs := h.srv.Requests()
		if len(recs) <= before {
			return resp, err
		}
		var got struct {
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		if uerr := json.Unmarshal(recs[len(recs)-1].Body, &got); uerr != nil {
			t.Fatalf("the body is not JSON: %v", uerr)
		}
		if string(got.Messages) != string(want) {
			t.Errorf("request %d: the messages sent differ from go-openai's encoding:\n got %s\nwant %s", len(recs), got.Messages, want)
		}
		if len(req.Tools) > 0 && string(got.Tools) != string(wantTools) {
			t.Errorf("request %d: the tools sent differ from go-openai's encoding:\n got %s\nwant %s", len(recs), got.Tools, wantTools)
		}
		return resp, err
	})
}

// TestRequestsSendTheCachedEncodings runs turns with tool calls, joined
// user messages, HTML and non-ASCII text, in every status placement, then
// reopens the session (which rebuilds the skeleton) and runs again: every
// request's messages, sent from cached encodings, are exactly what
// go-openai would have written.
func TestRequestsSendTheCachedEncodings(t *testing.T) {
	for _, mode := range []status.Placement{status.Tail, status.Append, status.OnChange} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHarness(t, llmtest.Sequence(
				llmtest.Call("read_file", `{"path":"a.txt"}`),
				llmtest.Reply{Content: "It says <b>alpha</b> & more", Reasoning: "read it first"},
				llmtest.Call("list_dir", `{"path":"."}`),
				llmtest.Text("Done — 世界 \u2028 ok"),
				llmtest.Text("Again."),
			), nil)
			h.cfg.StatusMode = mode
			checkEncodings(t, h)
			s := h.session("enc-" + string(mode))
			ctx := context.Background()
			for _, q := range []string{"Read a.txt <please> & tell me", "List the directory: \"quoted\" \\ 世界"} {
				if _, err := s.Run(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			again, err := Open(h.cfg, s.meta.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := again.Run(ctx, "once more"); err != nil {
				t.Fatal(err)
			}
			h.noInvalid()
			if n := len(h.srv.Requests()); n != 5 {
				t.Errorf("%d requests, want 5", n)
			}
		})
	}
}

// TestImageRequestsSendTheCachedEncodings does the same for a user
// message with an image (multi-part content) and the turn after it.
func TestImageRequestsSendTheCachedEncodings(t *testing.T) {
	h := visionHarness(t, llmtest.Sequence(llmtest.Text("A grey square."), llmtest.Text("You are welcome."), llmtest.Text("Still grey.")))
	checkEncodings(t, h)
	s := h.session("enc-img")
	ctx := context.Background()
	if _, err := s.RunWithImages(ctx, "What is in <this> picture?", []images.Input{{Name: "shot.png", Data: squarePNG(t, 64, 64)}}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := s.Run(ctx, fmt.Sprintf("Thanks %d %s", i, strings.Repeat("é", i))); err != nil {
			t.Fatal(err)
		}
	}
	h.noInvalid()
}
