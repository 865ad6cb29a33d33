package extensions

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/workbench"
)

// trustReview is one review of what a workspace ships (its MCP file, its
// hooks, its skills) before the user trusts it.
type trustReview struct {
	title, note, body string
	button            string       // the trusting button's label
	trust             func() error // runs off the UI goroutine
	failed            string       // what the error banner says could not be done
	done              func()       // runs on the UI goroutine once trusted
}

// review shows r's body under its note, and trusts on request.
func review(h Host, r trustReview) {
	body := &widget.Entry{MultiLine: true, Wrapping: fyne.TextWrapWord, Text: r.body}
	body.TextStyle.Monospace = true
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Text: r.note}
	var d *dialog.CustomDialog
	trust := &widget.Button{Text: r.button, Importance: widget.HighImportance, OnTapped: func() {
		d.Hide()
		h.Work(func() func() {
			err := r.trust()
			return func() {
				if err != nil {
					h.Error(r.failed + ": " + err.Error())
					return
				}
				r.done()
			}
		})
	}}
	d = dialog.NewCustomWithoutButtons(r.title, container.NewBorder(note, nil, nil, nil, container.NewScroll(body)), h.Window)
	d.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Not now", OnTapped: func() { d.Hide() }}, trust})
	size := h.Window.Canvas().Size()
	d.Resize(fyne.NewSize(min(760, size.Width-40), min(520, size.Height-40)))
	d.Show()
}

// ReviewMCP shows what a workspace's MCP file would start and, on
// request, trusts it off the UI goroutine with trust; restart then starts
// the session's servers again.
func ReviewMCP(h Host, wf mcp.WorkspaceFile, trust func() error, restart func()) {
	review(h, trustReview{
		title: "MCP servers of " + wf.Path, body: previewText(wf.Preview), button: "Trust and start them",
		note: "A repository can ship this file: trust it only if you would run these commands yourself. " +
			"Trust is kept for this exact content; any change asks again.",
		trust:  trust,
		failed: "Could not trust the workspace's MCP file",
		done: func() {
			h.Info("Trusted. The session starts the workspace's MCP servers now.")
			restart()
		},
	})
}

// ReviewHooks shows what a workspace's hooks file would run and, on
// request, trusts it off the UI goroutine with trust; restart then opens
// the session again so its hooks run.
func ReviewHooks(h Host, wf hooks.WorkspaceFile, trust func() error, restart func()) {
	review(h, trustReview{
		title: "Hooks of " + wf.Path, body: hooksPreview(wf.Preview), button: "Trust and run them",
		note: "A repository can ship this file: trust it only if you would run these commands yourself. " +
			"They run sandboxed like the agent's commands, without asking, at the events shown. Trust is kept for this exact content and the scripts it names; any change asks again.",
		trust:  trust,
		failed: "Could not trust the workspace's hooks file",
		done: func() {
			h.Info("Trusted. The session runs the workspace's hooks from now on.")
			restart()
		},
	})
}

// ReviewSkills shows the skills the workspace ws ships and, on request,
// trusts them off the UI goroutine with trust, for sessions created from
// then on.
func ReviewSkills(h Host, ws string, cat skill.Catalog, trust func() error) {
	var b strings.Builder
	for _, s := range cat.WorkspaceSkills {
		fmt.Fprintf(&b, "%s — %s\n  %s\n\n", s.Name, s.Description, s.Path)
	}
	review(h, trustReview{
		title: "Skills of " + ws, body: strings.TrimSpace(b.String()), button: "Trust these skills",
		note: "A repository can ship skills: their instructions reach the model when it loads them. " +
			"Trust them only if you would follow them yourself. Trust is kept for this exact content; any change asks again.",
		trust:  trust,
		failed: "Could not trust the workspace's skills",
		done:   func() { h.Info("Trusted. Sessions created from now on offer these skills.") },
	})
}

// hooksPreview lists hooks one a paragraph: the event and matcher, then
// the command and its time limit.
func hooksPreview(list []hooks.Hook) string {
	var b strings.Builder
	for _, h := range list {
		fmt.Fprintf(&b, "%s\n  runs %s\n  for at most %s\n\n", hookTitle(h), h.Command, h.Limit())
	}
	return strings.TrimSpace(b.String())
}

// hookTitle is "PreToolUse on run_shell|edit_file", or the event alone
// when its hooks apply to everything.
func hookTitle(h hooks.Hook) string {
	m := strings.TrimSpace(h.Matcher)
	if m == "" || m == "*" || h.Event == hooks.UserPromptSubmit || h.Event == hooks.Stop {
		return string(h.Event)
	}
	return fmt.Sprintf("%s on %s", h.Event, m)
}

// previewText lists what a workspace's MCP file would start, one server a
// paragraph: its name, the command with its arguments (or the URL), and the
// environment and headers it sets.
func previewText(cfg mcp.Config) string {
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		sc := cfg.Servers[n]
		fmt.Fprintf(&b, "%s\n", n)
		if sc.URL != "" {
			fmt.Fprintf(&b, "  connects to %s\n", sc.URL)
		} else {
			fmt.Fprintf(&b, "  runs %s %s\n", sc.Command, strings.Join(sc.Args, " "))
		}
		for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
			fmt.Fprintf(&b, "  env %s=%s\n", k, sc.Env[k])
		}
		for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
			fmt.Fprintf(&b, "  header %s: %s\n", k, workbench.Mask(sc.Headers[k]))
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}
