package hooks

import (
	"regexp"
	"strings"
)

// aliases are the Claude Code names of Tally's tools, so a matcher written
// for Claude Code ("Bash", "Edit|Write") matches the same calls here.
var aliases = map[string][]string{
	"run_shell":  {"Bash"},
	"edit_file":  {"Edit", "MultiEdit"},
	"write_file": {"Write"},
	"read_file":  {"Read"},
	"grep":       {"Grep"},
	"list_dir":   {"LS", "Glob"},
	"task":       {"Task", "Agent"},
}

// Aliases returns the Claude Code names a matcher may use for the Tally
// tool name (Bash for run_shell, Edit and MultiEdit for edit_file, Write
// for write_file, Read for read_file, …); nil when there are none. MCP
// tools are named mcp__server__tool in both.
func Aliases(tool string) []string { return aliases[tool] }

// compileMatcher compiles a group's matcher: "" and "*" match everything
// (nil, no note); anything else is a regular expression that must match
// the whole name ("run_shell|edit_file", "mcp__github__.*"). A matcher that
// does not compile is compared literally, with a note saying so.
func compileMatcher(m string) (*regexp.Regexp, string) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" {
		return nil, ""
	}
	if len(m) > maxMatcher {
		return nil, "is too long to be a regular expression and is compared literally"
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	if err != nil {
		return nil, "is not a valid regular expression and is compared literally"
	}
	return re, ""
}

// Matches reports whether the hook applies to subject: the tool name of a
// PreToolUse or PostToolUse event (its Claude Code aliases too), the
// source of a SessionStart ("startup", "resume", "compact") or the trigger
// of a PreCompact ("manual", "auto"). UserPromptSubmit and Stop hooks
// have no matcher and always apply.
func (h Hook) Matches(subject string) bool {
	if h.Event == UserPromptSubmit || h.Event == Stop {
		return true
	}
	m := strings.TrimSpace(h.Matcher)
	if m == "" || m == "*" {
		return true
	}
	re := h.re
	if re == nil {
		re, _ = compileMatcher(m) // a Hook not made by Parse
	}
	names := []string{subject}
	if h.Event == PreToolUse || h.Event == PostToolUse {
		names = append(names, aliases[subject]...)
	}
	for _, n := range names {
		if re != nil && re.MatchString(n) || re == nil && n == m {
			return true
		}
	}
	return false
}

// Select returns the hooks of event ev that apply to subject, in their
// order, each command once (a command listed twice runs once).
func Select(hooks []Hook, ev Event, subject string) []Hook {
	var out []Hook
	seen := map[string]bool{}
	for _, h := range hooks {
		if h.Event != ev || !h.Matches(subject) || seen[h.Command] {
			continue
		}
		seen[h.Command] = true
		out = append(out, h)
	}
	return out
}
