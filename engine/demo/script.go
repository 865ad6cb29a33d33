package demo

import (
	"strings"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
)

// Request is what the script reads of one model request: its messages in
// order and the names of the tools it offers.
type Request struct {
	Messages []Message
	Tools    []string
}

// Message is one request message.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role    string
	Content string
	// ToolCalls are an assistant message's calls; ToolCallID names the
	// call a tool result answers.
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is one function call: the script's in a Reply, the
// assistant's in a request Message. A Reply leaves ID empty; whoever
// serves the reply gives each call its own.
type ToolCall struct {
	ID, Name, Arguments string
}

// Reply is one scripted answer: reasoning, then text, then tool calls.
type Reply struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCall
}

func say(s string) Reply { return Reply{Content: s} }

func call(content, name, args string) Reply {
	return Reply{Content: content, ToolCalls: []ToolCall{{Name: name, Arguments: args}}}
}

// hello is the answer to a request with no story to tell.
const hello = "Hello! I am Tally's scripted demo model."

// Answer is the scripted model of the demo. Each answer depends only on
// the request: which story the last human message asks for, how far the
// turn has come (the assistant messages after it) and the tool results and
// earlier answers in it, so the script is deterministic and can be
// replayed against any session. It also answers the engine's own
// requests: compaction summaries, cycle hand-off briefs, purges and memory
// proposals. What
// it says of the fix and of the test run is what the request shows
// happened.
func Answer(req Request) Reply {
	if len(req.Messages) == 0 {
		return say(hello)
	}
	last := req.Messages[len(req.Messages)-1].Content
	switch {
	case strings.Contains(last, "This cycle is ending"):
		return say(brief(req.Messages))
	case strings.Contains(last, "Write a summary of the conversation") || strings.Contains(req.Messages[0].Content, "You summarise"):
		return say("The user asked to fix calc.Add, which returned a - b. " + readFix(req.Messages).fixSentence() + " " +
			readTests(req.Messages).testSentence() + " The user then asked for a tour of the project: go.mod, README.md, " +
			"calc/calc.go, calc/table.go (a generated squares table) and docs/design.md (rules on overflow, rounding, " +
			"naming, testing) were read.")
	case strings.Contains(last, proposalMarker):
		return say(proposal(req))
	case len(req.Tools) == 1 && req.Tools[0] == "purge_context":
		return say("Nothing in this short demo is worth removing; keeping everything.")
	}
	if strings.HasPrefix(req.Messages[0].Content, "# Sub-agent:") {
		return childStory(req)
	}
	human, step, lastTool := progress(req.Messages)
	// A human message may hold several requests joined together (the
	// latest is the last one): answer the one that comes last.
	switch latest(human, Prompt, ExplorePrompt, RecallPrompt, DelegatePrompt) {
	case "":
		if human == "" {
			return say(hello)
		}
	case Prompt:
		return fixStory(req.Messages, step, lastTool)
	case ExplorePrompt:
		if step == 0 && humanWith(req.Messages, ExplorePrompt) > 1 {
			// Asked again: say so, and that nothing new was read.
			return say(organisation + saidAgain)
		}
		// Once the history was compacted the reads before it are gone
		// from the request, so counting steps would start over: answer.
		if strings.Contains(req.Messages[0].Content, compact.SummaryHeading) || seeded(req) {
			step = len(exploreReads)
		}
		return exploreStory(step, req)
	case RecallPrompt:
		return recallStory(req.Messages, step, lastTool)
	case DelegatePrompt:
		if step == 0 {
			return Reply{Content: "Two independent questions: I'll hand each to a sub-agent, so their reading stays out of this conversation.",
				ToolCalls: []ToolCall{
					{Name: "task", Arguments: `{"description":"What the calc package offers","prompt":"List the exported functions of the calc package in calc/ with one line each."}`},
					{Name: "task", Arguments: `{"description":"What the design notes require","prompt":"Read docs/design.md and list its rules in one line each."}`},
				}}
		}
		return say("Both sub-agents reported (their reading stayed in their own context):\n\n" +
			"- **calc** offers `Add`, `Mul` and a generated squares table.\n" +
			"- **The design notes** ask for no panics, explicit overflow checks, banker's rounding and table-driven tests.")
	}
	return say("I am the **scripted demo model**, so I only know a few stories. Try one of the suggested prompts, " +
		"or open **Settings** and connect a real model to ask anything else.")
}

// brief is the hand-off brief that ends a cycle, stating what became of
// the fix and of the test run.
func brief(msgs []Message) string {
	fix, tests := readFix(msgs), readTests(msgs)
	open := "none."
	switch tests.state {
	case failed:
		open = "why `go test ./...` fails."
	case declined, unknown:
		if fix.state == done {
			open = "whether the tests pass with the fix."
		}
	}
	return "<carry_forward>\nDecisions: " + fix.fixSentence() + " " + tests.testSentence() + "\n" +
		"Constraints: the calc package never panics; callers check bounds.\nOpen questions: " + open + "\n" +
		"Next: answer the user's questions; recall_archive has the details of the fix.\n</carry_forward>"
}

// fixStory finds and fixes the bug, keeping a checklist, runs the tests
// and reports what they said.
func fixStory(msgs []Message, step int, last string) Reply {
	switch step {
	case 0:
		return call("I'll plan this as a checklist first.", "checklist_write",
			`{"items":[{"content":"Find the bug in Add","status":"in_progress"},{"content":"Fix calc.Add"},{"content":"Run the tests"}]}`)
	case 1:
		return Reply{
			Reasoning: "The user says Add is wrong. First I should see how the project is laid out, then read the calc package.",
			Content:   "Let me look at the project.",
			ToolCalls: []ToolCall{{Name: "list_dir", Arguments: `{"path":".","depth":2}`}},
		}
	case 2:
		return call("There is a `calc` package with a test. Reading the implementation:", "read_file", `{"path":"calc/calc.go"}`)
	case 3:
		return Reply{
			Reasoning: "Add returns a - b, which is the bug. Before changing it, check who calls Add so the fix does not break anything.",
			Content:   "`Add` returns `a - b`. Checking where it is used before changing it:",
			ToolCalls: []ToolCall{{Name: "grep", Arguments: `{"pattern":"Add\\(","path":".","glob":"*.go"}`}},
		}
	case 4:
		return call("Found it. Updating the checklist:", "checklist_write",
			`{"items":[{"id":"1","content":"Find the bug in Add","status":"completed"},{"id":"2","content":"Fix calc.Add","status":"in_progress"},{"id":"3","content":"Run the tests"}]}`)
	case 5:
		return call("Only the test calls it, and the test expects a sum. Fixing the operator:", "edit_file", editArgs)
	case 6:
		if fix := readFix(msgs); fix.state != done {
			said := fix.fixSentence()
			if fix.state == declined {
				said = "You declined the edit, so nothing was changed."
			}
			return say(said + "\n\n" +
				"The fix is one character in `calc/calc.go`:\n\n```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```\n\n" +
				"Send another message if you want me to try again.")
		}
		return call("Fixed. Ticking that off and moving on to the tests:", "checklist_write",
			`{"items":[{"id":"1","content":"Find the bug in Add","status":"completed"},{"id":"2","content":"Fix calc.Add","status":"completed"},{"id":"3","content":"Run the tests","status":"in_progress"}]}`)
	case 7:
		return call("Now running the tests:", "run_shell", testArgs)
	}
	tests := readTests(msgs)
	if step == 8 && tests.state == done {
		return call("", "todo_update", `{"id":"3","status":"completed"}`)
	}
	heading, advice := "Fixed", ""
	switch tests.state {
	case failed:
		heading = "Fixed, but the tests fail"
	case declined:
		heading, advice = "Fixed, not tested", " Run it yourself to confirm the fix."
	case unknown:
		heading = "Fixed, not tested"
	}
	return say("## " + heading + "\n\n" +
		"- **Bug:** `calc.Add` subtracted its arguments (`return a - b`).\n" +
		"- **Fix:** it now returns `a + b` (`calc/calc.go`, one line).\n" +
		"- **Tests:** " + tests.testSentence() + advice + "\n\n" +
		"`Mul` was already correct and is untouched.")
}

// exploreReads are the reads of the exploration story, which fill the
// demo's small window.
var exploreReads = []string{
	`{"path":"docs/design.md"}`, `{"path":"calc/table.go"}`, `{"path":"README.md"}`,
	`{"path":"calc/calc_test.go"}`, `{"path":"docs/design.md","offset":20}`, `{"path":"calc/table.go","offset":80}`,
	`{"path":"docs/design.md","offset":40}`, `{"path":"go.mod"}`,
	`{"path":"calc/table.go","offset":400}`, `{"path":"calc/table.go","offset":800}`, `{"path":"calc/table.go","offset":1000}`,
}

// exploreStory reads the large files, then describes the project, and
// says what Tally did to make room as the request it answers shows it
// (see whatHappened): the demo model knows only what it was sent.
func exploreStory(step int, req Request) Reply {
	if step < len(exploreReads) {
		return call("", "read_file", exploreReads[step])
	}
	return say(organisation + whatHappened(req))
}

// organisation is the exploration's answer, before what Tally did.
const organisation = "## How the project is organised\n\n" +
	"- `calc/calc.go` — `Add` and `Mul` on plain ints.\n" +
	"- `calc/table.go` — a generated table of squares behind `Square`.\n" +
	"- `calc/calc_test.go` — tests for `Add` and `Mul`.\n" +
	"- `docs/design.md` — rules: callers check bounds, the package never panics.\n\n"

// humanWith counts the human messages of msgs that hold prompt.
func humanWith(msgs []Message, prompt string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "user" && isHuman(m.Content) && strings.Contains(m.Content, prompt) {
			n++
		}
	}
	return n
}

// The sentences exploreStory ends with, one for each thing Tally may have
// done while the reads filled the demo's small window.
const (
	saidCycle   = "Reading all of that filled this demo's small context window, and Tally rolled over into a new cycle: look for the cycle row in the chat and the marker on the chart; the earlier messages are in the Archive."
	saidSummary = "Reading all of that filled this demo's small context window, and Tally compacted the history: a summary stands in for the earlier messages (the compaction row in the chat says what it kept, summarised and dropped), and the session stays in its cycle."
	saidCleared = "Reading all of that filled this demo's small context window, and Tally compacted it by clearing the older read results (the compaction row in the chat says what it kept); the session stays in its cycle, and a cleared file can be read again."
	saidNothing = "Everything read is still in this conversation: nothing needed compacting yet."
	saidAgain   = "I explored the project earlier in this conversation, so this answer comes from what I read then: nothing was read this time, and nothing needed compacting."
)

// whatHappened says what the request shows Tally did to the conversation:
// a new cycle's seed, a compaction summary in the system prompt, or tool
// results cleared or pruned by a compaction.
func whatHappened(req Request) string {
	switch {
	case seeded(req):
		return saidCycle
	case len(req.Messages) > 0 && strings.Contains(req.Messages[0].Content, compact.SummaryHeading):
		return saidSummary
	}
	for _, m := range req.Messages {
		if m.Role == "tool" && compact.Shrunk(m.Content) {
			return saidCleared
		}
	}
	return saidNothing
}

// recallStory searches the archive of the earlier cycle and reports the
// fix and the test run as the archive and the brief record them.
func recallStory(msgs []Message, step int, last string) Reply {
	if step == 0 {
		return call("That happened in an earlier cycle; searching the archive:", "recall_archive", `{"query":"return a - b"}`)
	}
	if !strings.Contains(last, "a - b") {
		return say("The archive has no earlier cycle yet. Press **New cycle** first, then ask again.")
	}
	tests := readTests(msgs)
	said := tests.testSentence()
	if tests.state == unknown {
		said = "The archive does not say whether the tests were run."
	}
	fix := readFix(msgs)
	if fix.state == done {
		return say("From the archive: " + fix.fixSentence() + " " + said)
	}
	return say("From the archive: `calc.Add` returned `a - b` instead of `a + b`. " + fix.fixSentence() + " " + said)
}

// latest returns the prompt that appears last in s, or "".
func latest(s string, prompts ...string) string {
	best, at := "", -1
	for _, p := range prompts {
		if i := strings.LastIndex(s, p); i > at {
			best, at = p, i
		}
	}
	return best
}

// progress finds the human turn the request answers: the text of the last
// human message, how many assistant messages follow it, and the text of the
// last tool result.
func progress(msgs []Message) (human string, step int, lastTool string) {
	at := -1
	for i, m := range msgs {
		if m.Role == "user" && isHuman(m.Content) {
			at = i
		}
	}
	if at < 0 {
		return "", 0, ""
	}
	for _, m := range msgs[at+1:] {
		switch m.Role {
		case "assistant":
			step++
		case "tool":
			lastTool = m.Content
		}
	}
	return msgs[at].Content, step, lastTool
}

// injected are the openings of the user-role messages the engine writes
// (status blocks, reminders, diagnostics, the cycle seed).
var injected = []string{"<agent_status", "<system-reminder", "<diagnostics", cycle.SeedMarker}

func isHuman(content string) bool {
	content = strings.TrimSpace(content)
	for _, p := range injected {
		if strings.HasPrefix(content, p) {
			return false
		}
	}
	return true
}

// seeded reports whether the request starts a new cycle (its first user
// message is the [CYCLE STATE] seed): the reads before it are archived.
func seeded(req Request) bool {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return strings.Contains(m.Content, cycle.SeedMarker)
		}
	}
	return false
}

// childStory is a sub-agent's side of the delegation story: one read, then
// its report.
func childStory(req Request) Reply {
	job := ""
	if len(req.Messages) > 1 {
		job = req.Messages[1].Content
	}
	done := false
	for _, m := range req.Messages {
		done = done || m.Role == "tool"
	}
	design := strings.Contains(job, "design.md")
	switch {
	case !done && design:
		return call("Reading the design notes.", "read_file", `{"path":"docs/design.md"}`)
	case !done:
		return call("Looking for the exported functions.", "grep", `{"pattern":"^func [A-Z]","path":"calc"}`)
	case design:
		return say("The design notes require: no panics (callers check bounds); explicit overflow checks; banker's rounding; table-driven tests.")
	}
	return say("calc exports Add (sum), Mul (product) and a generated table of squares.")
}
