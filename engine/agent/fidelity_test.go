package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
)

// The fidelity test (issue 19, item 7): a long session in a 32K window
// with a summarizer that remembers nothing, several compactions and a new
// cycle. Whatever the summary says, every later request must carry each
// fact the session planted: the user's words (verbatim within the budget,
// a stub line with its handle past it), the record line of every changed
// file, of the failed command and of the failed check that passed since,
// the sub-agent and the open checklist; and a handle of the dropped index
// must read the original text back.

// uselessSummary is all the summarizer of the fidelity test ever says.
const uselessSummary = "Summary: nothing in particular happened."

// fidelityTask and fidelityConstraint are the user's first two messages:
// the task statement and a stated constraint.
const (
	fidelityTask       = "Task: build the unit converter in package calc, one exported function per unit pair (Celsius, Fahrenheit, Kelvin), each with a table test; the fixture files g0.txt to g15.txt hold the reference readings."
	fidelityConstraint = "Constraint: never change the public API of package calc. Add new helpers only as unexported functions, and keep every existing signature as it is."
)

// fidelityWords is what the user says in turn n after the first two: each
// message names its turn and carries a paragraph, so that together they
// outgrow the budget of the user's words and the oldest become stubs.
func fidelityWords(n int) string {
	return fmt.Sprintf("Turn %d note: read the next fixtures and keep going.", n) + strings.Repeat(fmt.Sprintf(" Reading %d must stay within the tolerance the fixtures state, and any rounding happens once, at the end.", n), 20)
}

// fidelityFact is one thing the session planted.
type fidelityFact struct {
	kind, name string
	// kept are the forms compaction keeps by construction (the verbatim
	// message or its stub's handle, a record line, a checklist line);
	// raw are the forms the planting messages show while they are in the
	// log. Both are regular expressions.
	kept, raw []*regexp.Regexp
	// body is the message of a user's-words fact.
	body string
	// known, when set, names the defect that loses the fact today: its
	// loss is logged and counted, not failed.
	known string
	// since is the number of section rebuilds (compactions with a
	// summary, cycles) when the fact was planted: after a later one only
	// a kept form counts.
	since int
}

func quoted(texts ...string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, s := range texts {
		out = append(out, regexp.MustCompile(regexp.QuoteMeta(s)))
	}
	return out
}

// form says how text shows f: "kept", "raw" or "" when it does not.
func (f *fidelityFact) form(text string) string {
	for _, re := range f.kept {
		if re.MatchString(text) {
			return "kept"
		}
	}
	for _, re := range f.raw {
		if re.MatchString(text) {
			return "raw"
		}
	}
	return ""
}

// fidelityRow is one line of the fidelity table: the parent's turn
// requests made after the same number of compactions in the same cycle.
type fidelityRow struct {
	Compactions int // compactions so far, over all cycles
	Cycle       int
	Requests    int
	// Planted is the number of facts planted before the last of these
	// requests, Present how many of them it carried and Kept how many in
	// a form compaction keeps by construction; Missing counts the facts
	// missing (or only in a form the next compaction drops) over all the
	// requests of the row.
	Planted, Present, Kept, Missing int
}

// fidelityTable renders rows as the Markdown table of the README.
func fidelityTable(rows []fidelityRow) string {
	var b strings.Builder
	b.WriteString("| after N compactions | cycle | requests | facts planted | facts present | of them kept by construction | facts missing, all requests |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d |\n", r.Compactions, r.Cycle, r.Requests, r.Planted, r.Present, r.Kept, r.Missing)
	}
	return b.String()
}

// requestText is everything a request shows the model: every message's
// content and every tool call's name and arguments.
func requestText(msgs []llmtest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content + "\n")
		for _, c := range m.ToolCalls {
			b.WriteString(c.Name + " " + c.Arguments + "\n")
		}
	}
	return b.String()
}

// unnumber strips the line numbers and the closing page line
// retrieve_tool_result adds, giving back the stored text.
func unnumber(out string) string {
	lines := strings.Split(out, "\n")
	if n := len(lines); n > 0 && strings.HasPrefix(lines[n-1], "[lines ") {
		lines = lines[:n-1]
	}
	for i, l := range lines {
		if _, rest, ok := strings.Cut(l, "\t"); ok && strings.TrimSpace(l[:len(l)-len(rest)-1]) != "" {
			lines[i] = rest
		}
	}
	return strings.Join(lines, "\n")
}

// fidelity is the state of the fidelity session, shared by its script
// and the test.
type fidelity struct {
	t   *testing.T
	rec *recorder
	mu  sync.Mutex
	// turn is the user's turn running now and step the parent's requests
	// of it so far.
	turn, step int
	facts      []*fidelityFact
	pending    []*fidelityFact // planted by the last reply, active from the next request
	// budget is the user's-words budget at the largest prefix seen (the
	// smallest it ever was); catalog the tokens of the tool catalog.
	budget func(prefix int) int
	prefix int
	// texts maps the handle of every text a request showed to the text.
	texts map[string]string
	// retrieved are the handles read back, with what came back.
	retrieved   map[string]string
	want        map[string]string // what each read-back handle names
	rows        []fidelityRow
	checked     int
	dumped      bool
	droppedRead bool // a dropped read_file result was read back
	stubRead    bool
	// known are the facts lost to a known defect, with the defect.
	known map[string]string
}

// dump logs the first request that lacks a fact, whole.
func (f *fidelity) dump(index int, text string) {
	if !f.dumped {
		f.dumped = true
		f.t.Logf("request %d:\n%s", index, text)
	}
}

// sectionRebuilds counts the rebuilds so far that rewrote the compaction
// section (compactions with a summary) or started a cycle, and all the
// compactions and the cycles among them.
func (f *fidelity) sectionRebuilds() (section, compactions, summaries, cycles int) {
	for _, e := range f.rec.kinds(EventRebuild) {
		switch e.Rebuild.Kind {
		case rewrite.Cycle:
			section++
			cycles++
		case rewrite.Compaction:
			compactions++
			if e.Rebuild.Summary != "" {
				section++
				summaries++
			}
		}
	}
	return section, compactions, summaries, cycles
}

// plant adds facts planted now; user is true for the user's words, which
// the current request shows already.
func (f *fidelity) plant(user bool, facts ...*fidelityFact) {
	n, _, _, _ := f.sectionRebuilds()
	for _, x := range facts {
		x.since = n
		if x.kind == "user words" {
			f.texts[compact.Handle(x.body)] = x.body
		}
	}
	if user {
		f.facts = append(f.facts, facts...)
	} else {
		f.pending = append(f.pending, facts...)
	}
}

// check asserts what a parent's turn request must carry and adds it to
// the table.
func (f *fidelity) check(req *llmtest.Req) {
	f.facts = append(f.facts, f.pending...)
	f.pending = nil
	text := requestText(req.Messages)
	for _, m := range req.Messages {
		if m.Role == "tool" || m.Role == "user" {
			f.texts[compact.Handle(m.Content)] = m.Content
		}
	}
	f.noteRetrieved(req.Messages)
	f.prefix = max(f.prefix, tokens.Count(req.Messages[0].Content))
	n, compactions, _, cycles := f.sectionRebuilds()
	if compactions+cycles == 0 {
		return // nothing was compacted yet: the log holds everything
	}
	f.checked++
	present, kept, missing := 0, 0, 0
	for _, x := range f.facts {
		form := x.form(text)
		switch {
		case form == "kept":
			present++
			kept++
			continue
		case form == "raw" && x.since == n:
			present++
			continue
		case form == "raw":
			present++
		}
		missing++
		what := "is gone"
		if form == "raw" {
			what = "shows only in the messages that planted it, not in the record"
		}
		if x.known != "" {
			f.known[x.name] = x.known
			continue
		}
		f.t.Errorf("request %d (after %d compactions, cycle %d): %s %q %s", req.Index, compactions, cycles+1, x.kind, x.name, what)
		f.dump(req.Index, text)
	}
	// Newest first, the user's words within the budget are verbatim.
	used, budget := 0, f.budget(f.prefix)
	for i := len(f.facts) - 1; i >= 0; i-- {
		x := f.facts[i]
		if x.kind != "user words" {
			continue
		}
		if used += tokens.Count(x.body); used > budget {
			break
		}
		if !strings.Contains(text, x.body) {
			f.t.Errorf("request %d: the user's message %q is within the budget of %d tokens but not verbatim", req.Index, x.name, budget)
		}
	}
	row := fidelityRow{Compactions: compactions, Cycle: cycles + 1, Requests: 1, Planted: len(f.facts), Present: present, Kept: kept, Missing: missing}
	if k := len(f.rows) - 1; k >= 0 && f.rows[k].Compactions == row.Compactions && f.rows[k].Cycle == row.Cycle {
		row.Requests += f.rows[k].Requests
		row.Missing += f.rows[k].Missing
		f.rows[k] = row
		return
	}
	f.rows = append(f.rows, row)
}

// noteRetrieved keeps what each retrieve_tool_result call of msgs got.
func (f *fidelity) noteRetrieved(msgs []llmtest.Message) {
	calls := map[string]string{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			var p struct {
				SHA string `json:"sha"`
			}
			if c.Name == "retrieve_tool_result" && json.Unmarshal([]byte(c.Arguments), &p) == nil {
				calls[c.ID] = p.SHA
			}
		}
		if h, ok := calls[m.ToolCallID]; ok && m.Role == "tool" {
			f.retrieved[h] = m.Content
		}
	}
}

// handleIn returns the first handle re's first group matches in text, one
// the test knows the text of.
func (f *fidelity) handleIn(text string, re *regexp.Regexp) string {
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		if _, ok := f.texts[m[1]]; ok {
			return m[1]
		}
	}
	return ""
}

var (
	droppedRead = regexp.MustCompile(`- (#[0-9a-f]{12}) t\d+ read_file g\d+\.txt`)
	userStub    = regexp.MustCompile(`- turn \d+ · (#[0-9a-f]{12}) · "`)
)

// retrieve is the call that reads back the first handle re finds in the
// request, or a final answer when there is none.
func (f *fidelity) retrieve(req *llmtest.Req, re *regexp.Regexp, what string) llmtest.Reply {
	h := f.handleIn(requestText(req.Messages), re)
	if h == "" {
		f.t.Errorf("request %d: no %s with a handle to read back", req.Index, what)
		return llmtest.Text("nothing to read back")
	}
	f.want[h] = f.texts[h]
	return llmtest.Call("retrieve_tool_result", fmt.Sprintf(`{"sha":%q}`, h))
}

// fidelityPlan is what the parent does in each turn, after which it
// answers; the facts planted by a call come with it.
type fidelityStep struct {
	call  llmtest.ToolCall
	facts []*fidelityFact
}

func readStep(path string) fidelityStep {
	return fidelityStep{call: llmtest.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, path)}}
}

func shellStep(cmd string, facts ...*fidelityFact) fidelityStep {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return fidelityStep{call: llmtest.ToolCall{Name: "run_shell", Arguments: string(args)}, facts: facts}
}

func fileFact(path, change string) *fidelityFact {
	return &fidelityFact{kind: "file", name: path + " " + change,
		kept: []*regexp.Regexp{regexp.MustCompile(`- ` + regexp.QuoteMeta(path) + ` · ` + change)},
		raw:  quoted(fmt.Sprintf(`"path":%q`, path))}
}

func writeStep(path, content, change string) fidelityStep {
	args, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return fidelityStep{call: llmtest.ToolCall{Name: "write_file", Arguments: string(args)}, facts: []*fidelityFact{fileFact(path, change)}}
}

// Open checklist items of the fidelity session.
const (
	itemTests = "Add the table test for every unit pair"
	itemCheck = "Run make check until the whole package passes"
)

// fidelityTurns is the parent's plan: turn number to steps.
func fidelityTurns() map[int][]fidelityStep {
	edit, _ := json.Marshal(map[string]string{"path": "calc/convert.go", "old_string": "// more pairs", "new_string": "func KelvinToCelsius(k float64) float64 { return k - 273.15 }\n\n// more pairs"})
	failed := &fidelityFact{kind: "failed command", name: "grep -q Rankine calc/convert.go",
		kept: quoted("`grep -q Rankine calc/convert.go` · exit 1"), raw: quoted("grep -q Rankine calc/convert.go")}
	check := &fidelityFact{kind: "failed check", name: "make check",
		kept: []*regexp.Regexp{regexp.MustCompile("`make check` · failed in turn \\d+")}, raw: quoted(`"command":"make check"`)}
	passed := &fidelityFact{kind: "check passed since", name: "make check passed",
		kept: []*regexp.Regexp{regexp.MustCompile("`make check` · failed in turn \\d+ · passed since")}, raw: quoted(`"command":"make check"`)}
	sub := &fidelityFact{kind: "sub-agent", name: "Find the unit tables",
		kept: []*regexp.Regexp{regexp.MustCompile(`- Find the unit tables · turn \d+ · Report: the unit tables`), regexp.MustCompile(`- sub-1 "Find the unit tables"`)},
		raw:  quoted("[sub-agent sub-1 ")}
	list := `{"items":[{"content":"Write the Celsius and Fahrenheit converter","status":"in_progress"},{"content":"` + itemTests + `"},{"content":"` + itemCheck + `"}]}`
	return map[int][]fidelityStep{
		1: {{call: llmtest.ToolCall{Name: "checklist_write", Arguments: list}, facts: []*fidelityFact{
			{kind: "checklist", name: itemTests, kept: quoted(itemTests)}, {kind: "checklist", name: itemCheck, kept: quoted(itemCheck)}}},
			readStep("g0.txt"), writeStep("calc/convert.go", "package calc\n\n// CelsiusToFahrenheit converts.\nfunc CelsiusToFahrenheit(c float64) float64 { return c*9/5 + 32 }\n\n// more pairs\n", "created")},
		2: {readStep("g1.txt"), shellStep("grep -q Rankine calc/convert.go", failed), readStep("g2.txt")},
		3: {shellStep("make check", check), readStep("g3.txt"), readStep("g4.txt")},
		4: {{call: llmtest.ToolCall{Name: "edit_file", Arguments: string(edit)}, facts: []*fidelityFact{fileFact("calc/convert.go", "created")}},
			{call: llmtest.ToolCall{Name: "checklist_update", Arguments: `{"id":"1","status":"completed"}`}}, readStep("g5.txt"), readStep("g6.txt")},
		5: {{call: taskCall("Find the unit tables", "Read f0.txt and report where the unit tables are.", subagent.Explore), facts: []*fidelityFact{sub}}, readStep("g7.txt")},
		6: {writeStep("calc/table_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestTable(t *testing.T) {}\n", "created"), shellStep("make check", passed), readStep("g8.txt")},
		7: {readStep("g9.txt"), readStep("g10.txt"), readStep("g11.txt")},
		8: {readStep("g12.txt"), readStep("g13.txt")},
		// fidelityRetrieveDropped reads a dropped result back by its
		// handle (see the script); cycle 2 starts before
		// fidelityCycleTurn.
		fidelityCycleTurn: {writeStep("calc/kelvin.go", "package calc\n\nfunc kelvinOffset() float64 { return 273.15 }\n", "created"), readStep("g1.txt"), readStep("g2.txt")},
		// fidelityRetrieveStub reads an old message of the user back by
		// its stub's handle. Every other turn reads one fixture.
	}
}

// The window of the fidelity session and where its cycles start (see
// Config.CycleAt).
var (
	fidelityWindow  = 64_000
	fidelityCycleAt = 0.0
)

// fidelityTurnCount is the number of user turns; a new cycle starts
// before fidelityCycleTurn.
const (
	fidelityTurnCount       = 30
	fidelityCycleTurn       = 13
	fidelityRetrieveDropped = 10
	fidelityRetrieveStub    = 20
)

// script is the fidelity session's model.
func (f *fidelity) script(plan map[int][]fidelityStep) llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case isSummaryRequest(req):
			return llmtest.Text(uselessSummary)
		case isBriefRequest(req):
			return llmtest.Text("<carry_forward>Nothing to hand over.</carry_forward>")
		case isChildReq(req.Messages):
			if toolResults(req.Messages) == 0 {
				return llmtest.Call("read_file", `{"path":"f0.txt"}`)
			}
			return llmtest.Text("Report: the unit tables are in f0.txt, sixty lines of readings.")
		}
		f.check(req)
		k := f.step
		f.step++
		switch {
		case f.turn >= fidelityRetrieveDropped && k == 0 && !f.droppedRead && f.handleIn(requestText(req.Messages), droppedRead) != "":
			// The first turn from fidelityRetrieveDropped on whose request
			// indexes a dropped read (a summary compaction ran).
			f.droppedRead = true
			return f.retrieve(req, droppedRead, "dropped read_file result")
		case f.turn >= fidelityRetrieveStub && k == 0 && !f.stubRead && f.handleIn(requestText(req.Messages), userStub) != "":
			f.stubRead = true
			return f.retrieve(req, userStub, "stub of the user's words")
		}
		steps, ok := plan[f.turn]
		if !ok {
			steps = []fidelityStep{readStep(fmt.Sprintf("g%d.txt", f.turn%16))}
		}
		if k < len(steps) {
			f.plant(false, steps[k].facts...)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{steps[k].call}}
		}
		return llmtest.Text(fmt.Sprintf("Turn %d done. ", f.turn) + fidelityAnswer)
	})
}

// fidelityAnswer makes each turn's answer long, so the history grows with
// text only a summary can remove, not only with tool results the cheap
// layers clear.
var fidelityAnswer = strings.Repeat("The readings of the fixtures agree with the converter within the tolerance; nothing else changed. ", 60)

// userText is the user's message of turn n.
func userText(n int) string {
	switch n {
	case 1:
		return fidelityTask
	case 2:
		return fidelityConstraint
	}
	return fidelityWords(n)
}

// TestCompactionKeepsThePlantedFacts is the fidelity test of issue 19:
// see the comment at the top of this file.
func TestCompactionKeepsThePlantedFacts(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30-turn session with several compactions and cycles")
	}
	f := &fidelity{t: t, texts: map[string]string{}, retrieved: map[string]string{}, want: map[string]string{}, known: map[string]string{}}
	sw := newSmallWindow(t, fidelityWindow, f.script(fidelityTurns()))
	sw.cfg.CycleAt = fidelityCycleAt
	f.rec = sw.rec
	os.MkdirAll(filepath.Join(sw.ws, "calc"), 0o755)
	os.WriteFile(filepath.Join(sw.ws, "Makefile"), []byte("check:\n\ttest -f calc/table_test.go\n"), 0o644)
	s := sw.session("fidelity")
	compactAt := s.Snapshot().CompactAt
	catalog, _ := json.Marshal(s.req.Catalog())
	f.budget = func(prefix int) int {
		p := prefix + tokens.Count(string(catalog))
		return compact.UserWordsBudget(compact.Input{Threshold: compactAt, Target: compact.Target(compactAt, p), PrefixTokens: p, Window: s.Snapshot().Window})
	}
	ctx := context.Background()
	for n := 1; n <= fidelityTurnCount; n++ {
		if n == fidelityCycleTurn {
			if err := s.Compaction().NewCycle(ctx); err != nil {
				t.Fatal(err)
			}
		}
		text := userText(n)
		f.mu.Lock()
		f.turn, f.step = n, 0
		f.plant(true, &fidelityFact{kind: "user words", name: fmt.Sprintf("turn %d", n), body: text,
			kept: quoted(text, compact.Handle(text)), raw: quoted(text)})
		f.mu.Unlock()
		if _, err := s.Run(ctx, text); err != nil {
			t.Fatalf("turn %d: %v", n, err)
		}
	}
	sw.checkRequests(t)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.report(t, s)
}

// report logs the table and asserts what the whole session must show:
// several compactions and a cycle, stubs past the budget, and every
// handle read back giving the original text.
func (f *fidelity) report(t *testing.T, s *Session) {
	t.Helper()
	for _, e := range f.rec.kinds(EventRebuild) {
		r := e.Rebuild
		t.Logf("rebuild %s (%s): %d → %d tokens, summary %v", r.Reason, r.Kind, r.TokensBefore, r.TokensAfter, r.Summary != "")
	}
	t.Logf("user's-words budget at the largest prefix: %d tokens; %d facts planted; %d requests checked\n%s",
		f.budget(f.prefix), len(f.facts), f.checked, fidelityTable(f.rows))
	_, compactions, summaries, cycles := f.sectionRebuilds()
	t.Logf("%d compactions (%d with a summary), %d cycles", compactions, summaries, cycles)
	if compactions < 3 || summaries < 2 || cycles < 1 {
		t.Errorf("the session made %d compactions, %d with a summary, and %d cycles; want at least 3, 2 and 1", compactions, summaries, cycles)
	}
	for name, why := range f.known {
		t.Logf("known defect: %q is lost (%s)", name, why)
	}
	stubs := false
	for _, m := range s.Snapshot().Messages() {
		stubs = stubs || (m.Kind == transcript.KindSeed && userStub.MatchString(m.Text()))
	}
	stubs = stubs || userStub.MatchString(s.st.System)
	if !stubs {
		t.Error("no message of the user went past the budget: the stub lines are not exercised")
	}
	if len(f.want) < 2 {
		t.Errorf("%d handles were read back; want a dropped tool result and a message of the user", len(f.want))
	}
	for h, want := range f.want {
		got, ok := f.retrieved[h]
		switch {
		case !ok:
			t.Errorf("handle %s was not read back", h)
		case strings.TrimRight(unnumber(got), "\n") != strings.TrimRight(want, "\n"):
			t.Errorf("handle %s read back\n%.300s\nwant\n%.300s", h, got, want)
		}
	}
}
