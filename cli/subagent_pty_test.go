//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// threeChildren delegates three general jobs in one reply; child X runs
// "touch X" (one call, asked about), then reports.
func threeChildren(r *llmtest.Req) llmtest.Reply {
	msgs := r.Messages
	tools := 0
	for _, m := range msgs {
		if m.Role == "tool" {
			tools++
		}
	}
	if len(msgs) > 0 && strings.HasPrefix(msgs[0].Content, "# Sub-agent:") {
		job := msgs[1].Content
		name := job[strings.Index(job, "job ")+4:][:1]
		if tools > 0 {
			return llmtest.Text("report " + name)
		}
		return llmtest.Call("run_shell", `{"command":"touch `+name+`"}`)
	}
	if tools > 0 {
		return llmtest.Text("all jobs done")
	}
	var calls []llmtest.ToolCall
	for _, name := range []string{"A", "B", "C"} {
		args, _ := json.Marshal(map[string]string{"description": "make " + name, "prompt": "job " + name + ": create the file", "kind": "general"})
		calls = append(calls, llmtest.ToolCall{Name: "task", Arguments: string(args)})
	}
	return llmtest.Reply{ToolCalls: calls}
}

// Three sub-agents asked at once: their cards printed stacked, the user
// answered the bottom one and the answer went to the first. The terminal
// now shows one whole card at a time, naming the sub-agent that asks, and
// the answer typed under a card decides that card's call.
func TestParallelSubAgentApprovalsAreAskedOneAtATime(t *testing.T) {
	srv := llmtest.New(llmtest.ScriptFunc(threeChildren))
	defer srv.Close()
	ptmx, tty := openTerminal(t)
	ws := t.TempDir()

	chunks := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			if err != nil {
				close(chunks)
				return
			}
			chunks <- string(buf[:n])
		}
	}()
	cards := make(chan string, 8)
	go func() {
		var pending strings.Builder
		for chunk := range chunks {
			pending.WriteString(chunk)
			if text := strings.TrimRight(pending.String(), " "); !strings.Contains(text, "[n]o") || !strings.HasSuffix(text, ":") {
				continue
			}
			// A card is on screen: give any other card time to print
			// over it, as the stacked ones did, then answer.
			for wait := time.After(300 * time.Millisecond); ; {
				select {
				case more := <-chunks:
					pending.WriteString(more)
					continue
				case <-wait:
				}
				break
			}
			text := pending.String()
			pending.Reset()
			cards <- text
			answer := "n\n"
			if strings.Contains(text, "touch B") && strings.Count(text, "Approve this call") == 1 {
				answer = "y\n"
			}
			ptmx.Write([]byte(answer))
		}
	}()
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"run", "--data", t.TempDir(), "--base-url", srv.URL(), "--model", "deepseek-chat",
			"--workspace", ws, "--mode", "ask", "do the three jobs"}, tty, tty, tty)
	}()
	var seen []string
	timeout := time.After(45 * time.Second)
	for len(seen) < 3 {
		select {
		case c := <-cards:
			seen = append(seen, c)
		case <-timeout:
			t.Fatalf("only %d approval cards appeared: %q", len(seen), seen)
		}
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("tally run did not finish after the answers")
	}
	for i, text := range seen {
		if n := strings.Count(text, "Approve this call"); n != 1 {
			t.Errorf("card %d: %d cards on screen at once:\n%s", i+1, n, text)
		}
		if !strings.Contains(text, "asked by sub-agent sub-") {
			t.Errorf("card %d does not say which sub-agent asks:\n%s", i+1, text)
		}
		if !strings.Contains(text, "touch ") {
			t.Errorf("card %d is not whole:\n%s", i+1, text)
		}
	}
	// Only the call approved under its own card ran.
	for name, want := range map[string]bool{"A": false, "B": true, "C": false} {
		if _, err := os.Stat(filepath.Join(ws, name)); (err == nil) != want {
			t.Errorf("file %s exists: %v, want %v", name, err == nil, want)
		}
	}
}
