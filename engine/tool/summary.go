package tool

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

// Summarize returns a one-line human summary of a call, such as
// "run_shell: go test ./...", "edit_file calc/calc.go", `grep Add\( in
// calc/` or "Checklist: 3 items": the title of the call's card in the app
// and of its approval prompt. It never fails: for an unknown tool it names
// the arguments as "key: value" pairs, and only arguments that are not a
// JSON object are shown raw. Patterns are shown as the model wrote them,
// not escaped again. Control characters are made visible (so a summary is
// safe to print on a terminal) and the result is at most about 200 runes.
func Summarize(name string, args json.RawMessage) string {
	name = printableLine(name, 60)
	var m map[string]any
	if err := json.Unmarshal(normalizeArgs(args), &m); err != nil {
		return fallbackSummary(name, args)
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		return s
	}
	orDot := func(p string) string {
		if p == "" {
			return "."
		}
		return p
	}
	var s string
	switch name {
	case "run_shell":
		if str("command") == "" {
			return pairsSummary(name, m)
		}
		s = name + ": " + str("command")
	case "edit_file", "write_file", "read_file":
		if str("path") == "" {
			return pairsSummary(name, m)
		}
		s = name + " " + str("path")
		switch name {
		case "edit_file":
			if b, _ := m["replace_all"].(bool); b {
				s += " (all occurrences)"
			}
		case "write_file":
			if c, ok := m["content"].(string); ok {
				s += " (" + text.Plural(len(c), "byte") + ")"
			}
		case "read_file":
			if off, ok := m["offset"].(float64); ok && off > 1 {
				s += fmt.Sprintf(" from line %d", int(off))
			}
		}
	case "list_dir":
		s = name + " " + orDot(str("path"))
	case "web_fetch":
		s = name + " " + str("url")
	case "grep":
		if str("pattern") == "" {
			return pairsSummary(name, m)
		}
		pat := str("pattern")
		if strings.ContainsAny(pat, " \t") {
			pat = quoteHuman(pat)
		}
		s = name + " " + pat + " in " + orDot(str("path"))
		if g := str("glob"); g != "" {
			s += " (" + g + ")"
		}
	case "retrieve_tool_result":
		s = "Retrieve the stored result " + shortSHA(str("sha"))
	case "checklist_write", "todo_write":
		items, _ := m["items"].([]any)
		s = fmt.Sprintf("Checklist: %d item%s", len(items), text.S(len(items)))
	case "checklist_add", "todo_add":
		s = "Checklist: add " + quoteHuman(str("content"))
	case "checklist_update", "todo_update":
		s = "Checklist: item " + fmt.Sprint(m["id"])
		switch {
		case str("status") != "":
			s += " → " + strings.ReplaceAll(str("status"), "_", " ")
		case str("content") != "":
			s += " → " + quoteHuman(str("content"))
		}
	case "checklist_list", "todo_list":
		s = "Checklist: read"
	case "task":
		s = "Sub-agent: " + str("description")
		if k := str("kind"); k != "" {
			s += " (" + k + ")"
		}
	default:
		return pairsSummary(name, m)
	}
	return printableLine(s, summaryLimit)
}

// pairsSummary names the arguments of a call as "name key: value, …", in
// key order, with nested values abbreviated.
func pairsSummary(name string, m map[string]any) string {
	if len(m) == 0 {
		return name
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := m[k].(type) {
		case string:
			v = x
		case []any:
			v = fmt.Sprintf("[%d]", len(x))
		case map[string]any:
			v = "{…}"
		case nil:
			v = "null"
		default:
			v = fmt.Sprint(x)
		}
		parts = append(parts, k+": "+printableLine(v, 60))
	}
	return printableLine(name+" "+strings.Join(parts, ", "), summaryLimit)
}

func fallbackSummary(name string, args json.RawMessage) string {
	a := strings.TrimSpace(string(args))
	if a == "" || a == "{}" || a == "null" {
		return name
	}
	return printableLine(name+" "+a, summaryLimit)
}

// quoteHuman puts s in typographic quotes, cut to 60 runes; nothing in it
// is escaped, so a pattern reads as the model wrote it.
func quoteHuman(s string) string { return "“" + printableLine(s, 60) + "”" }

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	return sha
}
