package compact

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func user(text string) transcript.Message { return transcript.UserText("", text, t0) }

func reply(text string) transcript.Message { return transcript.AssistantReply(text, "", nil, t0) }

func call(id, name, args string) transcript.ToolCall {
	return transcript.ToolCall{ID: id, Name: name, Arguments: args}
}

func calls(text string, cs ...transcript.ToolCall) transcript.Message {
	return transcript.AssistantReply(text, "", cs, t0)
}

func result(c transcript.ToolCall, text string) transcript.Message {
	return transcript.ToolResult(c, text, false, t0)
}

func failure(c transcript.ToolCall, text string) transcript.Message {
	return transcript.ToolResult(c, text, true, t0)
}

// filler returns n bytes of innocuous text.
func filler(seed string, n int) string {
	line := "line of " + seed + " content without markers\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// flat returns tokens of k each for n messages.
func flat(n, k int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// checkLog fails the test when msgs breaks the API's pairing rules or has
// no plain user text.
func checkLog(t *testing.T, what string, msgs []transcript.Message) {
	t.Helper()
	if err := transcript.CheckPairing(msgs); err != nil {
		t.Errorf("%s: pairing broken: %v", what, err)
	}
	if len(transcript.Unanswered(msgs)) > 0 {
		t.Errorf("%s: ends with unanswered calls", what)
	}
	for _, m := range msgs {
		if m.IsPlainUserText() {
			return
		}
	}
	t.Errorf("%s: no plain user text left", what)
}

// session is a realistic log: a flaky-test fix with repeated reads, a
// failing test run and an edit.
func session() []transcript.Message {
	read1 := call("c1", "read_file", `{"path":"pkg/cache/lru.go"}`)
	test1 := call("c2", "run_shell", `{"cmd":"go test ./pkg/cache"}`)
	read2 := call("c3", "read_file", `{ "path": "pkg/cache/lru.go" }`)
	grep := call("c4", "grep", `{"pattern":"Evict","path":"pkg"}`)
	edit := call("c5", "edit_file", `{"path":"pkg/cache/lru.go","old":"a","new":"b"}`)
	test2 := call("c6", "run_shell", `{"cmd":"go test ./..."}`)
	lru := filler("lru", 6000)
	r1 := result(read1, lru)
	r1.Paths = []string{"pkg/cache/lru.go"}
	r3 := result(read2, lru)
	r3.Paths = []string{"pkg/cache/lru.go"}
	return []transcript.Message{
		user("Please fix the flaky eviction test in the cache package."), // 0
		calls("", read1), // 1
		r1,               // 2
		calls("", test1), // 3
		failure(test1, "--- FAIL: TestEvict\n    lru_test.go:42: got 3 want 2\nFAIL\nexit status 1"), // 4
		calls("The eviction order looks wrong; reading the file again.", read2),                      // 5
		r3, // 6
		transcript.Injected(transcript.KindStatus, "<agent_status>phase: execute; 1 failed call</agent_status>", t0), // 7
		calls("", grep),                    // 8
		result(grep, filler("grep", 4000)), // 9
		calls("", edit),                    // 10
		result(edit, "edited pkg/cache/lru.go: 1 replacement"), // 11
		user("Looks good. Run the whole suite too."),           // 12
		calls("", test2), // 13
		result(test2, "ok  \tgithub.com/x/pkg/cache\t0.2s"), // 14
		reply("All tests pass now."),                        // 15
	}
}

func sessionInput() Input {
	msgs := session()
	toks := flat(len(msgs), 100)
	toks[2], toks[6], toks[9] = 1500, 1500, 1000
	in := Input{
		Messages: msgs, Tokens: toks, PrefixTokens: 3000,
		Window: 1_000_000, WorkingSet: []string{"pkg/cache/lru_test.go"},
		Now: t0.Add(10 * time.Minute),
	}
	in.Level = in.PrefixTokens + sum(toks)
	return in
}

func describePins(pins []Pin) string {
	var b strings.Builder
	for _, p := range pins {
		fmt.Fprintf(&b, "%d:%s ", p.Index, p.Reason)
	}
	return strings.TrimSpace(b.String())
}
