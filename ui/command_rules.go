package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/ui/chat"
	tw "github.com/tally-dev/tally/ui/widget"
)

// allowPattern checks an allow pattern as the user types it.
func allowPattern(s string) error {
	_, err := cmdrule.Parse(cmdrule.Allow, s)
	return err
}

// quoteRules joins patterns for a sentence: `go test ./...`, `go vet`.
func quoteRules(patterns []string) string {
	q := make([]string, len(patterns))
	for i, p := range patterns {
		q[i] = "`" + p + "`"
	}
	return strings.Join(q, ", ")
}

// allowCommandFromCard opens "Always allow this command" for a pending
// run_shell call: one field for each rule the call proposes, filled with
// the exact command, which the user may widen with a trailing *. Allow
// stores the rules for the workspace and approves the call; Cancel
// leaves the card waiting.
func (u *UI) allowCommandFromCard(it *chat.Item) {
	live, p := u.live, it.Approval
	if live == nil || live.sess == nil || p == nil || len(p.Req.CommandRules) == 0 {
		return
	}
	entries := make([]*tw.EscEntry, len(p.Req.CommandRules))
	items := make([]*widget.FormItem, len(entries))
	for i, r := range p.Req.CommandRules {
		e := tw.NewEscEntry()
		e.SetText(r)
		e.TextStyle = fyne.TextStyle{Monospace: true}
		e.Validator = allowPattern
		entries[i] = e
		items[i] = &widget.FormItem{Text: "Command", Widget: e,
			HintText: "Runs without asking in this workspace; end it with * to allow any further words"}
	}
	d := dialog.NewForm("Always allow in this workspace", "Allow", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		patterns := make([]string, len(entries))
		for i, e := range entries {
			patterns[i] = e.Text
		}
		sess := live.sess
		u.bridge.Work(func() func() {
			var err error
			for _, pat := range patterns {
				if err = sess.Permissions().AllowCommand(pat); err != nil {
					break
				}
			}
			return func() {
				if err != nil {
					u.banner.ShowError("Could not add the command rule: " + err.Error())
					return
				}
				u.approveByRule(live, it, p, patterns)
			}
		})
	}, u.win)
	d.Resize(fyne.NewSize(560, 0))
	d.Show()
}

// approveByRule approves p once its rules are stored, on its card when
// the session is still shown.
func (u *UI) approveByRule(live *liveSession, it *chat.Item, p *chat.Approval, patterns []string) {
	if u.live != live || it.Approval != p {
		u.dropWaiting(live, p)
		p.Answer(tool.Approve)
		return
	}
	u.decide(it, tool.Approve)
	it.Decided = "Approved — " + quoteRules(patterns) + " now run without asking in this workspace (revoke under Rules)"
	u.chat.RefreshItem(it)
}

// commandRules is the Rules dialog's part about run_shell's command rules:
// each with Revoke, and a field to add one. done closes the dialog.
func (p *permissionBar) commandRules(live *liveSession, rules []cmdrule.InForce, loadErr error, done func()) fyne.CanvasObject {
	box := container.NewVBox(&widget.Label{Text: "Command rules (run_shell, this workspace)", TextStyle: fyne.TextStyle{Bold: true}})
	if loadErr != nil {
		box.Add(&widget.Label{Text: "The stored rules could not be read: " + loadErr.Error(), Importance: widget.DangerImportance, Wrapping: fyne.TextWrapWord})
	}
	if len(rules) == 0 {
		box.Add(&widget.Label{Text: "None: commands ask, as the mode says.", Importance: widget.LowImportance})
	}
	p.cmdRevoke = map[string]*widget.Button{}
	sess := live.sess
	for _, r := range rules {
		verb, scope := "Allow ", ""
		if r.Deny {
			verb = "Deny "
		}
		if r.ThisRun {
			scope = " (this session only)"
		}
		pattern := r.Pattern
		revoke := &widget.Button{Text: "Revoke", Icon: theme.DeleteIcon(), OnTapped: func() {
			p.u.bridge.Work(func() func() {
				err := sess.Permissions().RevokeCommand(pattern)
				return func() {
					if err != nil {
						p.u.banner.ShowError("Could not revoke the rule: " + err.Error())
						return
					}
					done()
					p.u.banner.ShowInfo("`" + pattern + "` no longer applies: matching commands ask again.")
				}
			})
		}}
		p.cmdRevoke[pattern] = revoke
		label := &widget.Label{Text: verb + "`" + pattern + "`" + scope, TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
		if r.Deny {
			label.Importance = widget.WarningImportance
		}
		box.Add(container.NewBorder(nil, nil, nil, revoke, label))
	}
	p.cmdEntry = &widget.Entry{PlaceHolder: "go test ./...   or   npm run lint *", TextStyle: fyne.TextStyle{Monospace: true}}
	add := func(deny bool) func() {
		return func() {
			pattern := p.cmdEntry.Text
			p.u.bridge.Work(func() func() {
				var err error
				if deny {
					err = sess.Permissions().DenyCommand(pattern)
				} else {
					err = sess.Permissions().AllowCommand(pattern)
				}
				return func() {
					if err != nil {
						p.u.banner.ShowError("Could not add the rule: " + err.Error())
						return
					}
					done()
					p.showRules()
				}
			})
		}
	}
	p.cmdAllow = &widget.Button{Text: "Allow", Icon: theme.ConfirmIcon(), OnTapped: add(false)}
	p.cmdDeny = &widget.Button{Text: "Deny", Icon: theme.CancelIcon(), OnTapped: add(true)}
	box.Add(container.NewBorder(nil, nil, nil, container.NewHBox(p.cmdAllow, p.cmdDeny), p.cmdEntry))
	box.Add(&widget.Label{Text: "Plain words, matched after the shell's quoting; a last * allows any further words. " +
		"A command of several parts runs without asking only if every part is allowed; a deny rule refuses a command any part of which it matches.",
		Importance: widget.LowImportance, Wrapping: fyne.TextWrapWord})
	return box
}
