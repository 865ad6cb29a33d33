package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/workbench"
)

// lineConn is a raw connection to a server: requests written as lines,
// every message it writes read back in order.
type lineConn struct {
	t    *testing.T
	in   *io.PipeWriter
	msgs chan map[string]any
	done chan struct{} // closed when the server has ended
}

func (f *fixture) rawConnect(t *testing.T) *lineConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineConn{t: t, in: inW, msgs: make(chan map[string]any, 256), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		Serve(context.Background(), inR, outW, Options{
			Open: func() (*workbench.Workbench, error) {
				w, _, err := workbench.Open(f.data, os.Getenv)
				return w, err
			},
			Session: func(string) workbench.SessionOptions {
				return workbench.SessionOptions{Flags: workbench.Flags{BaseURL: f.model.URL(), Model: "deepseek-chat"}}
			},
			Log: io.Discard,
		})
		outW.Close()
	}()
	go func() {
		defer close(c.msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.msgs <- m
			}
		}
	}()
	t.Cleanup(c.close)
	return c
}

// close ends the client's stream and waits for the server to end, which
// then lets go of the data directory.
func (c *lineConn) close() {
	c.in.Close()
	go func() {
		for range c.msgs {
		}
	}()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.t.Error("the server did not end with its input")
	}
}

func (c *lineConn) send(id int, method, params string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		c.t.Fatal(err)
	}
}

// until reads messages until one matches, returning those read before it
// and the match.
func (c *lineConn) until(what string, match func(map[string]any) bool) ([]map[string]any, map[string]any) {
	c.t.Helper()
	var before []map[string]any
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatalf("the server ended before %s", what)
			}
			if match(m) {
				return before, m
			}
			before = append(before, m)
		case <-timeout:
			c.t.Fatalf("no %s within 30 s", what)
		}
	}
}

func answerTo(id int) func(map[string]any) bool {
	return func(m map[string]any) bool {
		v, ok := m["id"].(float64)
		return ok && int(v) == id && m["method"] == nil
	}
}

func commandsUpdate(m map[string]any) bool {
	p, _ := m["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	return m["method"] == "session/update" && u["sessionUpdate"] == "available_commands_update"
}

// A session's slash commands are sent once the answer that opened it has
// been written, never before (the client would not know the session), for
// session/new, session/load and session/resume alike.
func TestCommandsFollowTheAnswerThatOpenedTheSession(t *testing.T) {
	f := newFixture(t)
	c := f.rawConnect(t)
	c.send(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	c.until("the answer to initialize", answerTo(1))
	c.send(2, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, f.ws))
	before, answer := c.until("the answer to session/new", answerTo(2))
	for _, m := range before {
		if commandsUpdate(m) {
			t.Fatal("the commands came before the answer to session/new")
		}
	}
	res, _ := answer["result"].(map[string]any)
	id, _ := res["sessionId"].(string)
	if id == "" {
		t.Fatalf("session/new: %v", answer)
	}
	c.until("the commands after session/new", commandsUpdate)
	c.close()

	for i, method := range []string{"session/load", "session/resume"} {
		c := f.rawConnect(t) // a new connection, which has the session closed
		c.send(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
		c.until("the answer to initialize", answerTo(1))
		c.send(10+i, method, fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, f.ws))
		before, answer := c.until("the answer to "+method, answerTo(10+i))
		if answer["error"] != nil {
			t.Fatalf("%s: %v", method, answer["error"])
		}
		for _, m := range before {
			if commandsUpdate(m) {
				t.Fatalf("the commands came before the answer to %s", method)
			}
		}
		c.until("the commands after "+method, commandsUpdate)
		c.close()
	}
}
