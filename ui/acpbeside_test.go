package ui

// An editor's tally acp beside the open app: its sessions open in the
// app's process, and the window and the editor never have one session
// open at once.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// acpLines is a raw ACP client: JSON-RPC lines to and from tally acp.
type acpLines struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Scanner
	next int
}

// call sends method with params and returns the answer's result, or its
// error's message.
func (c *acpLines) call(method string, params any) (json.RawMessage, string) {
	c.t.Helper()
	c.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for c.out.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
			c.t.Fatalf("tally acp wrote %q", c.out.Text())
		}
		if m.ID == nil || *m.ID != c.next || m.Method != "" {
			continue // an update, or a request of the agent
		}
		if m.Error != nil {
			return nil, m.Error.Message
		}
		return m.Result, ""
	}
	c.t.Fatalf("tally acp ended before it answered %s", method)
	return nil, ""
}

// Before, tally acp could not open a session while the app was open. It
// now runs inside the app; the editor cannot load the session the window
// shows, and the window cannot open a session the editor has open until
// the editor lets it go.
func TestAnEditorAndTheWindowNeverShareASession(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	h := openHarness(t, endpoint(srv), true)
	ws := h.newSession()
	shown := h.ui.live.id
	t.Setenv("OPENAI_API_KEY", "dummy") // the editor's environment

	acpIn, toACP := io.Pipe()
	fromACP, acpOut := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := cli.Main([]string{"acp", "--data", h.dir, "--base-url", srv.URL(), "--model", "test-model"}, acpIn, acpOut, io.Discard)
		acpOut.Close()
		done <- code
	}()
	c := &acpLines{t: t, in: toACP, out: bufio.NewScanner(fromACP)}
	c.out.Buffer(nil, 1<<20)
	if _, msg := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); msg != "" {
		t.Fatal(msg)
	}
	if _, msg := c.call("session/load", map[string]any{"sessionId": shown, "cwd": ws, "mcpServers": []any{}}); !strings.Contains(msg, "is open in the Tally app") {
		t.Errorf("the editor loaded the session the window shows: %q", msg)
	}
	res, msg := c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if msg != "" || json.Unmarshal(res, &created) != nil || created.SessionID == "" {
		t.Fatalf("session/new with the app open: %q %s", msg, res)
	}
	if _, err := h.ui.wb.Session(created.SessionID); err != nil {
		t.Fatalf("the editor's session is not in the app's store: %v", err)
	}

	h.ui.openSession(created.SessionID)
	h.waitFor("the window to say the editor has the session", func() bool {
		return strings.Contains(h.ui.banner.Text(), "is open in an editor connected with tally acp; close it in the editor and try again")
	})
	go io.Copy(io.Discard, fromACP) // the editor reads what is left
	toACP.Close()                   // and stops the agent
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("tally acp exited %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tally acp did not end with its input")
	}
	h.ui.openSession(created.SessionID)
	h.waitFor(fmt.Sprintf("session %s to open in the window", created.SessionID), func() bool {
		return h.ui.live != nil && h.ui.live.id == created.SessionID && h.ui.live.sess != nil
	})
}
