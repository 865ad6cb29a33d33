package settings

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
	tw "github.com/tally-dev/tally/ui/widget"
)

// safetyFields are the settings of what the agent may do: the default
// permission mode of new sessions, the environment variables and build
// caches commands get, and the secret-file deny list.
type safetyFields struct {
	mode     *widget.Select
	shellEnv *tw.EscEntry
	caches   *tw.EscEntry
	secrets  *tw.EscEntry
	// fetchLocal lets web_fetch reach this machine's and the local
	// network's link-local addresses.
	fetchLocal *widget.Check
	// connect, firstByte and idle are the model client's timeouts in
	// seconds; empty means the default.
	connect, firstByte, idle *tw.EscEntry
}

func newSafetyFields(s workbench.Settings) safetyFields {
	f := safetyFields{}
	labels := make([]string, len(tool.Modes))
	for i, m := range tool.Modes {
		labels[i] = m.Label()
	}
	f.mode = widget.NewSelect(labels, nil)
	m, err := tool.ParseMode(s.Mode)
	if err != nil {
		m = tool.ModeAsk
	}
	f.mode.SetSelected(m.Label())
	f.shellEnv = tw.NewEscEntry()
	f.shellEnv.SetPlaceHolder("e.g. DATABASE_URL GOPRIVATE")
	f.shellEnv.SetText(strings.Join(s.Shell.Env, " "))
	f.caches = tw.NewEscMultiLineEntry()
	f.caches.SetPlaceHolder("none; one folder a line")
	f.caches.SetText(strings.Join(s.Shell.CacheDirs, "\n"))
	f.caches.Wrapping = fyne.TextWrapBreak
	growing(f.caches, 2, 8)
	f.secrets = tw.NewEscMultiLineEntry()
	f.secrets.SetPlaceHolder("the default list; one pattern a line")
	f.secrets.SetText(strings.Join(s.Shell.SecretFiles, "\n"))
	f.secrets.Wrapping = fyne.TextWrapWord
	growing(f.secrets, 2, 8)
	f.fetchLocal = widget.NewCheck("web_fetch may open localhost and link-local pages", nil)
	f.fetchLocal.SetChecked(s.Shell.FetchLocal)
	f.connect, f.firstByte, f.idle = secondsEntry(s.ConnectTimeout, workbench.DefaultConnectTimeout),
		secondsEntry(s.FirstByteTimeout, workbench.DefaultFirstByteTimeout), secondsEntry(s.IdleTimeout, workbench.DefaultIdleTimeout)
	return f
}

func secondsEntry(v float64, def time.Duration) *tw.EscEntry {
	e := tw.NewEscEntry()
	e.SetPlaceHolder(strconv.FormatFloat(def.Seconds(), 'f', -1, 64))
	if v != 0 {
		e.SetText(strconv.FormatFloat(v, 'f', -1, 64))
	}
	return e
}

// items are the form rows of the fields but the timeouts.
func (f safetyFields) items() []*widget.FormItem {
	return []*widget.FormItem{
		{Text: "New sessions", Widget: f.mode,
			HintText: "Read-only refuses edits and commands; Ask asks first; Auto-edit applies edits, commands ask; Full auto needs the sandbox"},
		{Text: "Command variables", Widget: f.shellEnv,
			HintText: "extra environment variables commands get; API keys and names like *TOKEN* or *SECRET* never pass"},
		{Text: "Shared caches", Widget: f.caches,
			HintText: "folders, one a line, that sandboxed commands may write although your own builds use them too (a command could change what those builds run); empty: none"},
		{Text: "Secret files", Widget: f.secrets,
			HintText: "patterns the file tools refuse unless you allow that one read; empty uses the default list: " + strings.Join(tool.DefaultSecretFiles(), " ")},
		{Text: "Local pages", Widget: f.fetchLocal,
			HintText: "off: a page on a loopback or link-local address (a cloud's metadata service among them) is refused, redirects included"},
	}
}

// timeouts is the form row of the model client's timeouts.
func (f safetyFields) timeouts() *widget.FormItem {
	return &widget.FormItem{Text: "Timeouts", Widget: container.NewGridWithColumns(3,
		labelled("connect, s", f.connect), labelled("first byte, s", f.firstByte), labelled("stream idle, s", f.idle)),
		HintText: "a stalled request is retried, then the turn fails; -1 turns one off"}
}

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// apply copies the fields into s, or names the field to fix.
func (f safetyFields) apply(s *workbench.Settings) error {
	s.Mode = string(modeOfLabel(f.mode.Selected))
	if s.Mode == string(tool.ModeAsk) {
		s.Mode = "" // the default, stored as absent
	}
	s.Shell.Env = nil
	for _, n := range strings.FieldsFunc(f.shellEnv.Text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		if !envNameRe.MatchString(n) {
			return badField(f.shellEnv, "%q is not an environment variable name; list names like GOPRIVATE separated by spaces", n)
		}
		s.Shell.Env = append(s.Shell.Env, n)
	}
	for _, t := range []struct {
		e    *tw.EscEntry
		v    *float64
		name string
	}{{f.connect, &s.ConnectTimeout, "connect"}, {f.firstByte, &s.FirstByteTimeout, "first byte"}, {f.idle, &s.IdleTimeout, "stream idle"}} {
		*t.v = 0
		if txt := strings.TrimSpace(t.e.Text); txt != "" {
			v, err := strconv.ParseFloat(txt, 64)
			if err != nil || v == 0 {
				return badField(t.e, "the %s timeout %q is not a number of seconds; type something like 60, -1 to turn it off, or leave it empty", t.name, txt)
			}
			*t.v = v
		}
	}
	s.Shell.CacheDirs = lines(f.caches.Text)
	s.Shell.SecretFiles = lines(f.secrets.Text)
	s.Shell.FetchLocal = f.fetchLocal.Checked
	return nil
}

// lines returns the non-empty trimmed lines of s, or nil.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// modeOfLabel is the permission mode a label names; Ask when none.
func modeOfLabel(label string) tool.Mode {
	for _, m := range tool.Modes {
		if m.Label() == label {
			return m
		}
	}
	return tool.ModeAsk
}
