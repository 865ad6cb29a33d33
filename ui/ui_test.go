package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

func TestSendStreamsAnswerIntoChat(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Reply{
		Reasoning: "The user greets me.",
		Content:   "Hello from the **scripted** model.\n\n- one\n- two",
	}))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	h.send("say hello")
	h.waitIdle()
	if h.ui.chat.Deltas == 0 {
		t.Error("the answer never streamed into the chat before it was committed")
	}
	assistants := 0
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemAssistant {
			assistants++
		}
	}
	if assistants != 1 {
		t.Errorf("%d assistant rows; want the streamed tail replaced by the one committed answer", assistants)
	}
	var got *chat.Item
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemAssistant {
			got = it
		}
	}
	if got == nil || got.Streaming || !strings.Contains(got.Text, "scripted") {
		t.Fatalf("last assistant item = %+v; want the committed answer", got)
	}
	if got.ReasonOn {
		t.Error("reasoning is expanded by default; want it collapsed")
	}
	if !h.shows("scripted") || !h.shows("say hello") {
		t.Error("the window does not show the prompt and the Markdown answer")
	}
	if h.shows("<turn_meta>") {
		t.Error("the window shows the <turn_meta> block as if the user typed it")
	}
	if h.ui.footer.State.Run.Phase != tw.RunIdle {
		t.Errorf("footer state = %q; want idle", h.ui.footer.State.Run)
	}
}

func TestApproveAndDenyToolCalls(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"approved.txt","content":"yes"}`),
		llmtest.Text("Wrote it."),
		llmtest.Call("write_file", `{"path":"denied.txt","content":"no"}`),
		llmtest.Text("Understood, I will not write it."),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()

	decide := func(button func(*chat.ToolCard) func()) {
		it := h.pending()
		if it.Title != "write_file "+strings.Split(strings.Split(it.Call.Arguments, `"path":"`)[1], `"`)[0]+" (3 B)" &&
			!strings.HasPrefix(it.Title, "write_file ") {
			t.Errorf("card title %q does not name the tool and path", it.Title)
		}
		c := h.card(it)
		if c == nil {
			t.Fatal("the pending call's card is not on screen")
		}
		if !c.Buttons.Visible() {
			t.Fatal("Approve / Deny buttons are not shown on the pending card")
		}
		button(c)()
		h.waitIdle()
	}

	h.send("write approved.txt")
	decide(func(c *chat.ToolCard) func() { return func() { test.Tap(c.Approve) } })
	if b, err := os.ReadFile(filepath.Join(ws, "approved.txt")); err != nil || string(b) != "yes" {
		t.Fatalf("approved write did not happen: %q, %v", b, err)
	}

	h.send("write denied.txt")
	decide(func(c *chat.ToolCard) func() { return func() { test.Tap(c.Deny) } })
	if _, err := os.Stat(filepath.Join(ws, "denied.txt")); !os.IsNotExist(err) {
		t.Fatalf("denied write happened anyway (stat: %v)", err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	var refusal string
	for _, m := range last.Messages {
		if m.Role == "tool" {
			refusal = m.Content
		}
	}
	if !strings.Contains(refusal, "denied") {
		t.Errorf("the model's last tool result = %q; want a refusal saying it was denied", refusal)
	}
	if it := h.toolItem("write_file"); it == nil {
		t.Error("no write_file card")
	}
	if len(srv.Invalid()) > 0 {
		t.Errorf("the server rejected %d requests as malformed", len(srv.Invalid()))
	}
}

func TestStopMidTurnLeavesValidTranscript(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{Content: "this answer is too slow", Delay: 10 * time.Second},
		llmtest.Call("run_shell", `{"command":"echo hi"}`),
		llmtest.Text("after the stops"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()

	// Stop while the model is thinking.
	h.send("take your time")
	h.waitFor("the request to reach the model", func() bool { return len(srv.Requests()) == 1 })
	if h.ui.input.stop.Disabled() {
		t.Fatal("Stop is disabled while a turn runs")
	}
	test.Tap(h.ui.input.stop)
	h.waitIdle()
	if h.ui.footer.State.Run.Phase != tw.RunStopped {
		t.Errorf("footer state after Stop = %q; want stopped", h.ui.footer.State.Run)
	}

	// Stop while a tool call waits for approval.
	h.send("run something")
	h.waitFor("the approval request", func() bool {
		it := h.toolItem("run_shell")
		return it != nil && it.Approval != nil
	})
	test.Tap(h.ui.input.stop)
	h.waitIdle()
	if it := h.toolItem("run_shell"); it.Approval != nil || it.Status != chat.ToolStopped {
		t.Errorf("after Stop the card is %q with approval %v; want cancelled without buttons", it.Status, it.Approval)
	}

	msgs := h.ui.live.sess.Snapshot().Messages()
	if open := transcript.Unanswered(msgs); len(open) != 0 {
		t.Fatalf("unanswered tool calls after Stop: %+v", open)
	}
	h.send("continue")
	h.waitIdle()
	if !h.shows("after the stops") {
		t.Error("the turn after the stops did not answer")
	}
	if inv := srv.Invalid(); len(inv) > 0 {
		t.Errorf("the server rejected a request after Stop: %s", inv[0].Error)
	}
}

func TestFooterNeverReachesTheModel(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Reply{Fault: llmtest.Fault429},
		llmtest.Call("list_dir", `{"path":"."}`),
		llmtest.Text("done"),
	), llmtest.WithRetryAfter(1))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	s := h.ui.settings
	s.Prices = map[string]config.Price{"test-model": {CacheHit: 1, CacheMiss: 10, Completion: 20}}
	h.ui.applySettings(s)
	h.waitFor("settings", func() bool { return true })
	h.newSession()
	var seen []string
	h.send("look around")
	h.waitFor("the turn with a retry", func() bool {
		for _, p := range h.ui.footer.State.Parts(time.Now()) {
			if !contains(seen, p) {
				seen = append(seen, p)
			}
		}
		return !h.ui.live.job.running
	})
	var retry, cost, dur bool
	for _, p := range seen {
		retry = retry || strings.HasPrefix(p, "retry in ")
		cost = cost || strings.HasPrefix(p, "cost $")
		dur = dur || strings.HasPrefix(p, "last request ")
	}
	if !retry || !cost || !dur {
		t.Fatalf("footer never showed a retry countdown, a cost and a duration: %q", seen)
	}
	for _, r := range srv.Requests() {
		body := string(r.Body)
		for _, p := range seen {
			if p == "test-model" {
				continue // the model name is legitimately part of every request
			}
			if strings.Contains(body, p) {
				t.Errorf("request %d contains the footer text %q", r.Index, p)
			}
		}
		for _, p := range []string{"retry in", "cost $", "last request", "running step"} {
			if strings.Contains(body, p) {
				t.Errorf("request %d contains %q", r.Index, p)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestAPIKeyIsNeverRendered(t *testing.T) {
	const savedKey = "sk-saved-0123456789abcdefSECRET"
	const envKey = "sk-env-9876543210zyxwvuENVSECRET"
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("hi")))
	defer srv.Close()
	env := endpoint(srv)
	env["OPENAI_API_KEY"] = envKey
	h := newHarness(t, env)
	s := h.ui.settings
	s.APIKey = savedKey
	h.ui.applySettings(s)
	h.newSession()
	h.send("hello")
	h.waitIdle()
	h.ui.showSettings()
	h.waitFor("the settings dialog", func() bool { return len(h.win.Canvas().Overlays().List()) > 0 })
	texts := h.texts()
	if len(texts) < 20 {
		t.Fatalf("walked only %d strings; the tree walk is broken", len(texts))
	}
	for _, key := range []string{savedKey, envKey} {
		for _, txt := range texts {
			if strings.Contains(txt, key) || strings.Contains(txt, key[:12]) {
				t.Fatalf("the API key is rendered in %q", txt)
			}
		}
	}
	if !h.shows("OPENAI_API_KEY") {
		t.Error("the settings do not say where the key comes from")
	}
}

func TestSessionsRestoreRenameDelete(t *testing.T) {
	h := silentSession(t)
	id := h.ui.live.id
	h.waitFor("LastSession to be saved", func() bool {
		s := h.ui.wb.Settings()
		return s.LastSession == id
	})
	if err := h.ui.wb.Rename(id, "renamed"); err != nil {
		t.Fatal(err)
	}
	h.ui.sessions.refresh()
	h.waitFor("the renamed row", func() bool {
		return len(h.ui.sessions.items) == 1 && h.ui.sessions.items[0].Title == "renamed"
	})
	h.ui.deleteSession(id)
	h.waitFor("the list to empty", func() bool { return len(h.ui.sessions.items) == 0 })
	if _, err := h.ui.wb.Session(id); err == nil {
		t.Error("the deleted session is still in the store")
	}
	// A bad workspace is explained, not crashed on.
	h.ui.createSession(filepath.Join(h.dir, "does-not-exist"), "")
	if !strings.Contains(h.ui.banner.Text(), "not an existing folder") {
		t.Errorf("banner = %q; want it to explain the bad folder", h.ui.banner.Text())
	}
}
