package record

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
)

// Render limits.
const (
	// MaxCommandRunes is the longest command text shown; longer ones are
	// cut with an ellipsis.
	MaxCommandRunes = 160
	// MaxResultRunes is the longest sub-agent result line shown.
	MaxResultRunes = 160
	// MaxTurnsShown is how many of a file's turns are listed, the newest.
	MaxTurnsShown = 6
)

// Render returns r as text for the model, at most maxTokens
// tokens (no limit when maxTokens <= 0), or "" for an empty record. The
// text depends only on r and maxTokens. Every string that came from the
// model, a file or a tool is neutralised and kept on one line, so the
// record cannot open or close an engine tag or start a block of its own.
//
// When the record does not fit, parts are left out in this order until it
// does, each leaving a line that says how many were left out: the oldest
// successful commands, the oldest sub-agents, the oldest files, the
// oldest failed commands. Checks that failed and the checklist are cut
// last, by cutting the text.
func (r Record) Render(maxTokens int) string {
	if r.Empty() {
		return ""
	}
	var ok, failed []Command
	for _, c := range r.Commands {
		if c.Failed() {
			failed = append(failed, c)
		} else {
			ok = append(ok, c)
		}
	}
	v := view{r: r, failed: failed, ok: ok, subs: r.Subagents, files: r.Files}
	text := v.text()
	if maxTokens <= 0 {
		return text
	}
	for tokens.Count(text) > maxTokens && v.drop() {
		text = v.text()
	}
	if tokens.Count(text) > maxTokens {
		text = cut(text, maxTokens)
	}
	return text
}

// view is a record with the parts Render has left out counted.
type view struct {
	r                            Record
	failed, ok                   []Command
	subs                         []Subagent
	files                        []File
	lessFailed, lessOK, lessSubs int
	lessFiles                    int
}

// drop leaves out one more item, in the order Render documents, and
// reports whether there was one.
func (v *view) drop() bool {
	switch {
	case len(v.ok) > 0:
		v.ok, v.lessOK = v.ok[1:], v.lessOK+1
	case len(v.subs) > 0:
		v.subs, v.lessSubs = v.subs[1:], v.lessSubs+1
	case len(v.files) > 0:
		v.files, v.lessFiles = v.files[1:], v.lessFiles+1
	case len(v.failed) > 0:
		v.failed, v.lessFailed = v.failed[1:], v.lessFailed+1
	default:
		return false
	}
	return true
}

func (v *view) text() string {
	var b strings.Builder
	if len(v.files) > 0 || v.lessFiles > 0 {
		b.WriteString("Files written (path · change · lines · turns):\n")
		more(&b, v.lessFiles, "older files")
		for _, f := range v.files {
			fmt.Fprintf(&b, "- %s · %s", line(f.Path, 0), f.Change)
			if f.Added > 0 || f.Removed > 0 {
				fmt.Fprintf(&b, " · +%d −%d", f.Added, f.Removed)
			}
			if f.Rewrites > 0 {
				fmt.Fprintf(&b, " · rewritten whole %s, now %d lines", times(f.Rewrites), f.Lines)
			}
			if len(f.Turns) > 0 {
				b.WriteString(" · " + turnList(f.Turns))
			}
			b.WriteString("\n")
		}
	}
	if len(v.failed)+len(v.ok)+v.lessFailed+v.lessOK > 0 {
		b.WriteString("Commands run (last outcome of each distinct command, failures first):\n")
		more(&b, v.lessFailed, "older failed commands")
		for _, c := range v.failed {
			commandLine(&b, c)
		}
		more(&b, v.lessOK, "older successful commands")
		for _, c := range v.ok {
			commandLine(&b, c)
		}
	}
	if len(v.r.Checks) > 0 {
		b.WriteString("Builds and tests that failed:\n")
		for _, c := range v.r.Checks {
			state := "not passed since"
			if c.PassedSince {
				state = "passed since"
			}
			fmt.Fprintf(&b, "- `%s` · failed in turn %d · %s\n", line(c.Command, MaxCommandRunes), c.FailedTurn, state)
		}
	}
	if len(v.subs) > 0 || v.lessSubs > 0 {
		b.WriteString("Sub-agents run:\n")
		more(&b, v.lessSubs, "older sub-agents")
		for _, s := range v.subs {
			fmt.Fprintf(&b, "- %s · turn %d · %s\n", line(s.Name, MaxResultRunes), s.Turn, line(s.Result, MaxResultRunes))
		}
	}
	if len(v.r.Checklist) > 0 {
		b.WriteString("Open checklist when this record was made (the checklist tool shows the current one):\n")
		for _, c := range v.r.Checklist {
			b.WriteString(transcript.NeutralizeLine(strings.TrimSpace(c)) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func commandLine(b *strings.Builder, c Command) {
	status := "exit " + strconv.Itoa(c.Exit)
	if c.Exit == ExitFailed {
		status = "failed, no exit status"
	}
	fmt.Fprintf(b, "- `%s` · %s · turn %d", line(c.Command, MaxCommandRunes), status, c.Turn)
	if c.Runs > 1 {
		fmt.Fprintf(b, " · %d runs", c.Runs)
	}
	b.WriteString("\n")
}

func more(b *strings.Builder, n int, what string) {
	if n > 0 {
		fmt.Fprintf(b, "- … %d %s left out for room\n", n, what)
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + "×"
}

// turnList shows the newest MaxTurnsShown turns.
func turnList(ts []int) string {
	prefix := "turn "
	if len(ts) > 1 {
		prefix = "turns "
	}
	if len(ts) > MaxTurnsShown {
		ts = ts[len(ts)-MaxTurnsShown:]
		prefix += "…, "
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.Itoa(t)
	}
	return prefix + strings.Join(parts, ", ")
}

// line neutralises untrusted text for one line of the record, cut to n
// runes when n > 0.
func line(s string, n int) string {
	s = strings.TrimSpace(s)
	if n > 0 && utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n-1]) + "…"
	}
	s = transcript.NeutralizeLine(s)
	return strings.ReplaceAll(s, "`", "'")
}

// cut returns the longest prefix of whole lines of s within maxTokens,
// with a last line saying the record was cut.
func cut(s string, maxTokens int) string {
	const note = "- … record cut for room"
	ls := strings.Split(s, "\n")
	for n := len(ls) - 1; n > 0; n-- {
		t := strings.Join(ls[:n], "\n") + "\n" + note
		if tokens.Count(t) <= maxTokens {
			return t
		}
	}
	return note
}
