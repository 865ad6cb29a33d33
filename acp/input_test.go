package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/workbench"
)

// rawServe serves f for lines written as they are and returns every
// message the server wrote until it ended.
func rawServe(t *testing.T, f *fixture, lines []string, flags workbench.Flags) []map[string]any {
	t.Helper()
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(context.Background(), in, outW, Options{
			Open: func() (*workbench.Workbench, error) {
				w, _, err := workbench.Open(f.data, os.Getenv)
				return w, err
			},
			Session: func(string) workbench.SessionOptions { return workbench.SessionOptions{Flags: flags} },
			Log:     io.Discard,
		})
		outW.Close()
	}()
	var got []map[string]any
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
			continue
		}
		got = append(got, m)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not end with its input")
	}
	return got
}

// TestBadInputIsAnsweredNeverFatal sends what a broken or hostile client
// might: every request still gets one answer (an error where it is
// wrong), lines that are not messages get a parse error, and the server
// keeps answering after them.
func TestBadInputIsAnsweredNeverFatal(t *testing.T) {
	f := newFixture(t)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("DEEPSEEK_API_KEY", "")
	lines := []string{
		`garbage`,
		`[1,2,3]`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"one"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":42,"prompt":"x"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"../../etc","cwd":"/tmp","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":6,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"ask"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"` + f.ws + `","mcpServers":[{"name":"x"}]}}`,
		`{"jsonrpc":"2.0","id":9,"method":"session/set_config_option","params":{"sessionId":"nope","configId":"a","value":"b"}}`,
		`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`,
	}
	got := rawServe(t, f, lines, workbench.Flags{}) // no model: session/new says what to set
	answers := map[float64]map[string]any{}
	parseErrors := 0
	for _, m := range got {
		id, ok := m["id"].(float64)
		if !ok {
			if e, _ := m["error"].(map[string]any); e != nil && e["code"] == float64(-32700) {
				parseErrors++
			}
			continue
		}
		if _, dup := answers[id]; dup {
			t.Errorf("request %v answered twice", id)
		}
		answers[id] = m
	}
	if parseErrors != 2 {
		t.Errorf("%d parse errors, want one for each line that is not a message object", parseErrors)
	}
	for id := 1.0; id <= 10; id++ {
		m, ok := answers[id]
		if !ok {
			t.Errorf("request %v got no answer", id)
			continue
		}
		wantOK := id == 10
		if _, isErr := m["error"]; isErr == wantOK {
			t.Errorf("request %v: %v", id, m)
		}
		if e, _ := m["error"].(map[string]any); e != nil {
			if msg, _ := e["message"].(string); msg == "" || strings.Contains(msg, "panic") {
				t.Errorf("request %v: error without a sentence: %v", id, e)
			}
		}
	}
	if e, _ := answers[8]["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "model") {
		t.Errorf("session/new without a model: %v; want the sentence saying what to configure", answers[8])
	}
}
