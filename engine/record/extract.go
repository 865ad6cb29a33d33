package record

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
)

// Tool names the record reads. They are the engine's built-in tools and
// the agent's sub-agent tool; results of other tools are not recorded.
const (
	toolWrite = "write_file"
	toolEdit  = "edit_file"
	toolShell = "run_shell"
	toolTask  = "task"
)

// Turns returns the turn of each message of msgs read as one log that
// follows base human messages: base plus the number of human messages
// (transcript.Message.IsPlainUserText) at or before it. Messages before the
// first human message are in turn base.
//
// removed, when given, are the turn numbers among those base of the human
// messages a compaction took out of this log, which may lie between the
// ones it kept (it keeps the user's first words and drops later ones to
// stubs): the log then follows base-len(removed) earlier turns, and each
// human message takes the next number that is not removed.
func Turns(msgs []transcript.Message, base int, removed ...int) []int {
	out := make([]int, len(msgs))
	gone := make(map[int]bool, len(removed))
	for _, n := range removed {
		gone[n] = true
	}
	t := base - len(gone)
	for i := range msgs {
		if msgs[i].IsPlainUserText() {
			t++
			for gone[t] {
				t++
			}
		}
		out[i] = t
	}
	return out
}

// FromMessages is FromLog(msgs, 0, nil): the record of a whole log whose
// first human message is turn 1.
func FromMessages(msgs []transcript.Message) Record { return FromLog(msgs, 0, nil) }

// FromLog computes the record of msgs, read as one log that follows base
// human messages, removed among them (see [Turns]). When only is not nil, only the tool
// results at the indexes it accepts are recorded; the calls they answer
// are looked up anywhere in msgs, so a caller can record part of a log
// with the turn numbers of the whole.
//
// What is recorded, and how reliably:
//   - write_file and edit_file results that report success ("created",
//     "overwrote", "edited"): the path from the call's arguments. Line
//     counts of an edit come from its old and new text times the
//     occurrences replaced; a write that created a file adds its lines; a
//     write over an existing file counts as a rewrite whose removed lines
//     are not known. A failed write is not a change.
//   - run_shell results: the command from the call's arguments, the exit
//     status from the result's last "exit status N" line, or 0 for a
//     result that is not an error and ExitFailed for one that is. A
//     command is a check when [IsCheck] says so.
//   - Deletions only from a run_shell command that is a plain "rm" or
//     "git rm" of literal paths (no shell syntax, globs, quotes or
//     variables) that exited 0. Files removed any other way (scripts,
//     globs, a build step) are not recorded: the record does not guess.
//   - task results (sub-agents): the call's description and the first line
//     after the result's header, or the reason it ended.
//
// Results whose text an earlier compaction replaced by a placeholder still
// count as runs; the outcome then comes from the result's error flag.
func FromLog(msgs []transcript.Message, base int, only func(i int) bool, removed ...int) Record {
	turns := Turns(msgs, base, removed...)
	calls := map[string]transcript.ToolCall{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
	}
	var b builder
	for i, m := range msgs {
		if m.Role != transcript.Tool || (only != nil && !only(i)) {
			continue
		}
		args := m.Args
		if c, ok := calls[m.ToolCallID]; ok {
			args = c.Arguments
		}
		b.result(m, args, turns[i])
	}
	return b.rec()
}

// builder accumulates a Record in log order.
type builder struct {
	r Record
}

func (b *builder) rec() Record {
	b.r.Commands = failuresFirst(b.r.Commands)
	return b.r
}

func (b *builder) result(m transcript.Message, args string, turn int) {
	name := m.ToolName
	text := m.Text()
	switch name {
	case toolWrite, toolEdit:
		b.write(name, text, args, m.IsError, turn)
	case toolShell:
		b.shell(text, args, m.IsError, turn)
	case toolTask:
		b.task(text, args, m.IsError, turn)
	}
}

func (b *builder) write(name, text, args string, isError bool, turn int) {
	if isError {
		return
	}
	var p struct {
		Path       string `json:"path"`
		Content    string `json:"content"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if json.Unmarshal([]byte(args), &p) != nil || strings.TrimSpace(p.Path) == "" {
		return
	}
	f := File{Path: cleanPath(p.Path), Turns: []int{turn}}
	switch {
	case name == toolEdit && strings.HasPrefix(text, "edited "):
		f.Change = Changed
		n := occurrences(text)
		add, rem := editLines(p.OldString, p.NewString)
		f.Added, f.Removed = add*n, rem*n
	case name == toolWrite && strings.HasPrefix(text, "created "):
		f.Change, f.Added = Created, lines(p.Content)
	case name == toolWrite && strings.HasPrefix(text, "overwrote "):
		f.Change, f.Rewrites, f.Lines = Changed, 1, lines(p.Content)
	case shrunk(text):
		// The result was cleared; the call's arguments still say what was
		// written, but not whether it created the file.
		f.Change = Changed
		if name == toolEdit {
			add, rem := editLines(p.OldString, p.NewString)
			f.Added, f.Removed = add, rem
		} else {
			f.Rewrites, f.Lines = 1, lines(p.Content)
		}
	default:
		return
	}
	b.file(f)
}

func (b *builder) file(f File) {
	for k, o := range b.r.Files {
		if o.Path == f.Path {
			b.r.Files[k] = mergeFile(o, f)
			return
		}
	}
	b.r.Files = append(b.r.Files, f)
}

// exitRe finds the "exit status N" line run_shell ends its result with.
var exitRe = regexp.MustCompile(`(?m)^exit status (-?\d+)\s*$`)

func (b *builder) shell(text, args string, isError bool, turn int) {
	var p struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(args), &p) != nil {
		return
	}
	cmd := strings.Join(strings.Fields(p.Command), " ")
	if cmd == "" {
		return
	}
	exit := 0
	if all := exitRe.FindAllStringSubmatch(text, -1); len(all) > 0 {
		n, err := strconv.Atoi(all[len(all)-1][1])
		if err == nil {
			exit = n
		}
	}
	if isError && exit == 0 {
		exit = ExitFailed
	}
	c := Command{Command: cmd, Exit: exit, Turn: turn, Runs: 1}
	if k, ok := indexCommand(b.r.Commands, cmd); ok {
		c.Runs += b.r.Commands[k].Runs
		b.r.Commands[k] = c
	} else {
		b.r.Commands = append(b.r.Commands, c)
	}
	if IsCheck(cmd) {
		k := -1
		for j, ch := range b.r.Checks {
			if ch.Command == cmd {
				k = j
			}
		}
		switch {
		case exit != 0 && k < 0:
			b.r.Checks = append(b.r.Checks, Check{Command: cmd, FailedTurn: turn})
		case exit != 0:
			b.r.Checks[k] = Check{Command: cmd, FailedTurn: turn}
		case k >= 0:
			b.r.Checks[k].PassedSince = true
		}
	}
	if exit == 0 {
		for _, path := range removedPaths(cmd) {
			b.file(File{Path: path, Change: Deleted, Turns: []int{turn}})
		}
	}
}

func indexCommand(cmds []Command, cmd string) (int, bool) {
	for k, c := range cmds {
		if c.Command == cmd {
			return k, true
		}
	}
	return -1, false
}

func (b *builder) task(text, args string, isError bool, turn int) {
	var p struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal([]byte(args), &p)
	name := strings.TrimSpace(p.Description)
	if name == "" {
		name = "sub-agent"
	}
	b.r.Subagents = append(b.r.Subagents, Subagent{Name: name, Result: taskOutcome(text, isError), Turn: turn})
}

// taskOutcome is the one-line result of a sub-agent: the first non-empty
// line after the "[sub-agent …]" header, prefixed by "failed: " for an
// error result.
func taskOutcome(text string, isError bool) string {
	if shrunk(text) {
		if isError {
			return "failed (result cleared)"
		}
		return "finished (result cleared)"
	}
	rest := text
	if strings.HasPrefix(rest, "[sub-agent ") {
		if _, after, ok := strings.Cut(rest, "\n"); ok {
			rest = after
		} else {
			rest = ""
		}
	}
	line := ""
	for l := range strings.SplitSeq(rest, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	if line == "" {
		line = "no report"
	}
	if isError && !strings.HasPrefix(line, "failed") && !strings.HasPrefix(line, "cancelled") {
		line = "failed: " + line
	}
	return line
}

// checkRe matches the commands that build or test code.
var checkRe = regexp.MustCompile(`(^|[;&|(])\s*(\w+=\S*\s+)*((time|sudo|nice|env)\s+)?(go (test|build|vet)|npm (run )?(test|build)|yarn (test|build)|pnpm (test|build)|pytest|python3? -m (pytest|unittest)|cargo (test|build|check|clippy)|make|tox|mvn|gradle|\./gradlew|tsc|jest|vitest|ruff|mypy|golangci-lint|staticcheck|ctest|cmake --build)([\s:]|$)`)

// IsCheck reports whether a shell command builds or tests code: go
// test/build/vet, npm/yarn/pnpm test or build, pytest, cargo
// test/build/check/clippy, make, tox, mvn, gradle, tsc, jest, vitest,
// ruff, mypy, golangci-lint, staticcheck, ctest and cmake --build, as the
// program of any simple command of the line ("cd x && make" is a check,
// "echo make" is not).
func IsCheck(cmd string) bool { return checkRe.MatchString(cmd) }

// removedPaths returns the paths a plain rm or git rm command removes, or
// nil when the command is anything else or uses shell syntax.
func removedPaths(cmd string) []string {
	if strings.ContainsAny(cmd, ";&|<>$`*?[]{}()'\"\\~!#") {
		return nil
	}
	f := strings.Fields(cmd)
	switch {
	case len(f) > 0 && f[0] == "rm":
		f = f[1:]
	case len(f) > 1 && f[0] == "git" && f[1] == "rm":
		f = f[2:]
	default:
		return nil
	}
	var out []string
	for _, a := range f {
		if strings.HasPrefix(a, "-") {
			continue
		}
		out = append(out, cleanPath(a))
	}
	return out
}

// shrunk reports whether a result's text is a compaction placeholder.
func shrunk(text string) bool {
	return strings.HasPrefix(text, "[tool result cleared") || strings.HasPrefix(text, "[pruned:")
}

func cleanPath(p string) string {
	return strings.TrimPrefix(strings.TrimSpace(p), "./")
}

// lines counts the lines of s: 0 for "", and a last line without a
// newline counts.
func lines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// editLines counts the lines an edit from old to new removes and adds,
// leaving out the lines both share at their start and at their end.
func editLines(old, new string) (added, removed int) {
	a, b := splitLines(old), splitLines(new)
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	return len(b), len(a)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// occurrencesRe reads "replaced N occurrences" from an edit_file result.
var occurrencesRe = regexp.MustCompile(`replaced (\d+) occurrences`)

func occurrences(text string) int {
	if m := occurrencesRe.FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n
		}
	}
	return 1
}
