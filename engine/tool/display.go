package tool

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tally-dev/tally/internal/text"
)

// Limits of what an approval shows.
const (
	// DisplayLimit is the longest argument text an approval will show: a
	// call whose arguments are longer is refused without asking, because
	// a person cannot review it (the model is told to write a script file
	// and run that instead).
	DisplayLimit = 16 << 10
	// DisplayWidth is where shown lines are wrapped, in runes.
	DisplayWidth = 100
	// spaceRun is the length from which a run of spaces is shown as a
	// count, so padding cannot push the rest of a command out of sight.
	spaceRun = 4
)

// Display renders a call for a person deciding whether to run it: every
// byte of the arguments that matters is shown, nothing is cut. The command
// of run_shell (or the path and size of a file tool, or every argument of
// another tool) is shown whole, wrapped at DisplayWidth, with line breaks
// marked "⏎", tabs "⇥", runs of four or more spaces as "⟨N spaces⟩",
// other control and invisible format characters as "\uXXXX" and invalid
// UTF-8 as "\xNN". ok is false when the arguments exceed DisplayLimit and
// cannot be shown whole; the call must then not be approved.
func Display(name string, args json.RawMessage) (shown string, ok bool) {
	if len(args) > DisplayLimit {
		return fmt.Sprintf("%s with %s of arguments: too long to review", Visible(name), text.Plural(len(args), "byte")), false
	}
	var m map[string]any
	if err := json.Unmarshal(normalizeArgs(args), &m); err != nil {
		return Visible(name) + "\n" + wrap(Visible(string(args))), true
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	switch name {
	case "run_shell":
		if c := str("command"); c != "" {
			return "run_shell: run this command in the workspace\n" + wrap(Visible(c)), true
		}
	case "write_file":
		if p := str("path"); p != "" {
			c, _ := m["content"].(string)
			return fmt.Sprintf("write_file: write %s to\n%s", text.Plural(len(c), "byte"), wrap(Visible(p))), true
		}
	case "edit_file":
		if p := str("path"); p != "" {
			return "edit_file: replace text in\n" + wrap(Visible(p)), true
		}
	case "web_fetch":
		if u := str("url"); u != "" {
			return "web_fetch: fetch this page from the network\n" + wrap(Visible(u)), true
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(Visible(name))
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok {
			raw, _ := json.Marshal(m[k])
			v = string(raw)
		}
		fmt.Fprintf(&b, "\n%s:\n%s", Visible(k), wrap(Visible(v)))
	}
	return b.String(), true
}

// Visible makes every character of s visible on one logical line, by the
// rules of [Display].
func Visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ':
			n := 1
			for i+n < len(s) && s[i+n] == ' ' {
				n++
			}
			if n >= spaceRun {
				fmt.Fprintf(&b, "⟨%d spaces⟩", n)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		case r == '\n':
			b.WriteString("⏎")
		case r == '\t':
			b.WriteString("⇥")
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// wrap breaks visible text into lines of at most DisplayWidth runes, each
// indented by two spaces; a "⏎" mark also ends a line.
func wrap(s string) string {
	var b strings.Builder
	n := 0
	b.WriteString("  ")
	for _, r := range s {
		if n == DisplayWidth {
			b.WriteString("\n  ")
			n = 0
		}
		b.WriteRune(r)
		n++
		if r == '⏎' {
			b.WriteString("\n  ")
			n = 0
		}
	}
	return strings.TrimRight(b.String(), " \n")
}
