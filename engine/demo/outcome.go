package demo

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

// The script's own calls whose outcome the story reports: the edit that
// fixes calc.Add and the test run.
const (
	editArgs = `{"path":"calc/calc.go","old_string":"\treturn a - b","new_string":"\treturn a + b"}`
	testArgs = `{"command":"go test ./...","timeout_seconds":120}`
)

// state is what became of one step of the fix story.
type state int

const (
	unknown  state = iota // the request does not show it
	done                  // the edit was made, or the tests passed
	declined              // the user did not approve the call
	failed                // the call failed; outcome.line says how
)

// outcome is what the request shows of one step.
type outcome struct {
	state state
	// line is the first line of the failure, for failed.
	line string
}

// failLineRunes bounds the failing line quoted in an answer or a brief.
const failLineRunes = 200

// phrasing is how the script states the outcome of one step. The script
// reads these statements back from the request where the tool result is
// no longer in it (archived, summarised or cleared), so a brief or a
// summary carries the outcome forward unchanged.
type phrasing struct {
	done, declined, unknown string
	// failed is followed by the failing line and closed by failedEnd.
	failed string
}

const failedEnd = "”."

var (
	fixWords = phrasing{
		done:     "`calc.Add` was fixed in `calc/calc.go`: it returned `a - b` and now returns `a + b`.",
		declined: "`calc.Add` was not changed: the edit was declined.",
		failed:   "`calc.Add` was not changed; the edit failed with “",
		unknown:  "`calc.Add` has not been changed yet.",
	}
	testWords = phrasing{
		done:     "`go test ./...` passed.",
		declined: "`go test ./...` was not run: it was declined.",
		failed:   "`go test ./...` failed; its first failing line: “",
		unknown:  "`go test ./...` has not been run.",
	}
)

func (p phrasing) say(o outcome) string {
	switch o.state {
	case done:
		return p.done
	case declined:
		return p.declined
	case failed:
		return p.failed + o.line + failedEnd
	}
	return p.unknown
}

// find returns the latest statement of an outcome in p's words in msgs,
// or unknown.
func (p phrasing) find(msgs []Message) outcome {
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		o, at := outcome{}, -1
		for _, f := range []struct {
			s     state
			words string
		}{{done, p.done}, {declined, p.declined}, {failed, p.failed}} {
			j := strings.LastIndex(c, f.words)
			if j <= at {
				continue
			}
			o, at = outcome{state: f.s}, j
			if f.s == failed {
				rest := c[j+len(f.words):]
				if end := strings.Index(rest, failedEnd); end >= 0 {
					rest = rest[:end]
				}
				o.line = text.OneLine(rest, failLineRunes)
			}
		}
		if at >= 0 {
			return o
		}
	}
	return outcome{}
}

func (o outcome) fixSentence() string  { return fixWords.say(o) }
func (o outcome) testSentence() string { return testWords.say(o) }

// readFix is what became of the script's edit of calc.Add.
func readFix(msgs []Message) outcome {
	return read(msgs, "edit_file", "calc/calc.go", fixWords, judgeEdit)
}

// readTests is what became of the script's `go test ./...`.
func readTests(msgs []Message) outcome {
	return read(msgs, "run_shell", "go test", testWords, judgeTests)
}

// read judges the result of the latest call of tool whose arguments
// contain match while that result is still in msgs as the tool returned
// it, and otherwise finds the latest statement of the outcome in p's
// words.
func read(msgs []Message, tool, match string, p phrasing, judge func(string) (outcome, bool)) outcome {
	calls := map[string]bool{}
	var last outcome
	found := false
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			for _, c := range m.ToolCalls {
				if c.Name == tool && strings.Contains(c.Arguments, match) {
					calls[c.ID] = true
				}
			}
		case "tool":
			if calls[m.ToolCallID] {
				last, found = judge(m.Content)
			}
		}
	}
	if found {
		return last
	}
	return p.find(msgs)
}

// judgeEdit reads an edit_file result; it is false for text that is no
// edit_file result (a placeholder that replaced it).
func judgeEdit(result string) (outcome, bool) {
	switch {
	case denied(result):
		return outcome{state: declined}, true
	case strings.HasPrefix(result, "edited "):
		return outcome{state: done}, true
	case strings.HasPrefix(result, "edit_file: "):
		return outcome{state: failed, line: failureLine(strings.TrimPrefix(result, "edit_file: "))}, true
	}
	return outcome{}, false
}

// exitStatus is the line run_shell ends its result with.
var exitStatus = regexp.MustCompile(`(?m)^exit status (-?\d+)$`)

// judgeTests reads a run_shell result; it is false for text that is no
// run_shell result (a placeholder that replaced it).
func judgeTests(result string) (outcome, bool) {
	if denied(result) {
		return outcome{state: declined}, true
	}
	if m := exitStatus.FindAllStringSubmatch(result, -1); len(m) > 0 {
		if code, _ := strconv.Atoi(m[len(m)-1][1]); code == 0 {
			return outcome{state: done}, true
		}
		return outcome{state: failed, line: firstFailing(result)}, true
	}
	if strings.HasPrefix(result, "run_shell: ") {
		return outcome{state: failed, line: failureLine(strings.TrimPrefix(result, "run_shell: "))}, true
	}
	return outcome{}, false
}

// goPosition matches a line naming a place in Go source, where go test
// and the compiler say what failed ("calc_test.go:7: Add(2, 3) = -1").
var goPosition = regexp.MustCompile(`\.go:\d+`)

// firstFailing picks the line of a failed run's output that says what
// failed: the first naming a place in Go source, else the first marked
// FAIL or panic, else the first line at all.
func firstFailing(out string) string {
	lines := strings.Split(out, "\n")
	for _, says := range []func(string) bool{
		goPosition.MatchString,
		func(l string) bool { return strings.Contains(l, "FAIL") || strings.HasPrefix(l, "panic:") },
		func(l string) bool { return !exitStatus.MatchString(l) },
	} {
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && says(l) {
				return text.OneLine(l, failLineRunes)
			}
		}
	}
	return "no output"
}

// failureLine is the first line of a failed call's message, or "no message".
func failureLine(s string) string {
	if l := text.FirstLine(s, failLineRunes); l != "" {
		return l
	}
	return "no message"
}

// denied reports whether a tool result says the user did not approve the
// call.
func denied(result string) bool {
	r := strings.ToLower(strings.TrimSpace(result))
	return strings.HasPrefix(r, "denied") || strings.Contains(r, "did not approve") || strings.Contains(r, "user denied")
}
