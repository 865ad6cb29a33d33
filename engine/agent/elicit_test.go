package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/tool"
)

// formServer is an MCP server whose tool "signup" asks for a form and
// returns the action and the answers it got.
func formServer(t *testing.T) mcp.ServerConfig {
	schema := json.RawMessage(`{"type":"object","properties":{
		"email":{"type":"string","format":"email"},
		"plan":{"type":"string","enum":["free","pro"],"default":"free"}},"required":["email"]}`)
	return mcp.ServerConfig{URL: mcpHTTP(t, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "signup", Description: "Sign the user up."},
			func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Sign up for the newsletter?", RequestedSchema: schema})
				if err != nil {
					return textOut("elicit failed: " + err.Error()), nil, nil
				}
				b, _ := json.Marshal(res.Content)
				return textOut(res.Action + " " + string(b)), nil, nil
			})
	}, nil)}
}

// signupScript calls the signup tool once and keeps what it returned.
func signupScript(result *string) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.Step == 0 {
			return llmtest.Call("mcp__news__signup", `{}`)
		}
		*result = lastTool(req)
		return llmtest.Text("done")
	})
}

func TestFormReachesTheHostAndItsAnswerTheServer(t *testing.T) {
	var result string
	h := newHarness(t, signupScript(&result), tool.ApproveAll{})
	h.cfg.Forms = true
	forms := make(chan mcp.FormRequest, 1)
	h.cfg.OnEvent = func(e Event) {
		h.rec.on(e)
		if e.Kind == EventForm {
			forms <- *e.Form
		}
	}
	s := h.mcpSession("forms", map[string]mcp.ServerConfig{"news": formServer(t)})
	answered := make(chan error, 1)
	go func() {
		// The host, answering as a person would: a wrong address first.
		f := <-forms
		if f.Form.Server != "news" || f.Form.Message != "Sign up for the newsletter?" || len(f.Form.Fields) != 2 {
			answered <- nil
			t.Errorf("the form reached the host as %+v", f)
		}
		err := s.MCP().AnswerForm(f.ID, mcp.Reply{Action: mcp.ActionAccept, Content: map[string]any{"email": "nope"}})
		if err == nil || !strings.Contains(err.Error(), `"email" must be an email address`) {
			t.Errorf("a wrong answer gave %v", err)
		}
		answered <- s.MCP().AnswerForm(f.ID, mcp.Reply{Action: mcp.ActionAccept, Content: map[string]any{"email": "ada@example.com"}})
	}()
	if _, err := s.Run(context.Background(), "sign me up"); err != nil {
		t.Fatal(err)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(result, `accept {"email":"ada@example.com","plan":"free"}`) {
		t.Errorf("the server got %q; want the answer with the plan's default", result)
	}
	done := h.rec.kinds(EventFormDone)
	if len(done) != 1 || done[0].Reason != "accepted" {
		t.Errorf("form_done events %+v", done)
	}
	if err := s.MCP().AnswerForm("form-1", mcp.Declined); err == nil || !strings.Contains(err.Error(), "answered already") {
		t.Errorf("a second answer gave %v", err)
	}
}

func TestFormIsDeclinedWhenNoOneCanAnswer(t *testing.T) {
	var result string
	h := newHarness(t, signupScript(&result), tool.ApproveAll{})
	s := h.mcpSession("headless", map[string]mcp.ServerConfig{"news": formServer(t)})
	if _, err := s.Run(context.Background(), "sign me up"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(result, "decline") {
		t.Errorf("the server got %q; want a decline", result)
	}
	var said bool
	for _, e := range h.rec.kinds(EventMCP) {
		said = said || strings.Contains(e.Reason, "no one is there to fill it in, so it was declined")
	}
	if !said || len(h.rec.kinds(EventForm)) != 0 {
		t.Errorf("no event said why the form was declined: %+v", h.rec.kinds(EventMCP))
	}
}

func TestFormIsWithdrawnWhenTheTurnStops(t *testing.T) {
	var result string
	h := newHarness(t, signupScript(&result), tool.ApproveAll{})
	h.cfg.Forms = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.cfg.OnEvent = func(e Event) {
		h.rec.on(e)
		if e.Kind == EventForm {
			cancel() // the user presses Stop instead of answering
		}
	}
	s := h.mcpSession("stopped", map[string]mcp.ServerConfig{"news": formServer(t)})
	if _, err := s.Run(ctx, "sign me up"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(h.rec.kinds(EventFormDone)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if done := h.rec.kinds(EventFormDone); len(done) != 1 || done[0].Reason != "withdrawn" {
		t.Errorf("form_done events %+v; want the form withdrawn", done)
	}
}

// A host may answer a form from inside OnEvent: the answer's own event
// (form_done) is delivered after the callback returns, with no deadlock.
func TestFormAnsweredFromInsideOnEvent(t *testing.T) {
	var result string
	h := newHarness(t, signupScript(&result), tool.ApproveAll{})
	h.cfg.Forms = true
	var s *Session
	inside := false
	var order []EventKind
	h.cfg.OnEvent = func(e Event) {
		h.rec.on(e)
		if inside {
			t.Errorf("%s was delivered while another OnEvent call ran", e.Kind)
		}
		inside = true
		defer func() { inside = false }()
		if e.Kind == EventForm || e.Kind == EventFormDone {
			order = append(order, e.Kind)
		}
		if e.Kind == EventForm {
			if err := s.MCP().AnswerForm(e.Form.ID, mcp.Reply{Action: mcp.ActionAccept, Content: map[string]any{"email": "ada@example.com"}}); err != nil {
				t.Errorf("answering inside OnEvent: %v", err)
			}
			if len(order) != 1 {
				t.Errorf("form_done was delivered inside the form's own OnEvent call")
			}
		}
	}
	s = h.mcpSession("inside", map[string]mcp.ServerConfig{"news": formServer(t)})
	done := make(chan error, 1)
	go func() { _, err := s.Run(context.Background(), "sign me up"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the turn did not end: answering a form from OnEvent deadlocked")
	}
	if len(order) != 2 || order[1] != EventFormDone || !strings.Contains(result, "accept") {
		t.Errorf("events %v, server got %q; want form then form_done and an accepted answer", order, result)
	}
}
