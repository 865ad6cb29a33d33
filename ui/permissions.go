package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/engine/tool"
	tw "github.com/tally-dev/tally/ui/widget"
)

// permissionBar sits in the header of an open session: the permission
// mode, the "allow network" switch for commands, whether commands are
// sandboxed, and the "always allow" rules, each revocable.
type permissionBar struct {
	u       *UI
	mode    *widget.Select
	network *widget.Check
	sandbox *widget.Label
	rules   *widget.Button
	box     *fyne.Container
	loading bool // set while load fills the widgets, so their callbacks stay quiet
	// The open Rules dialog's command rules: each one's Revoke by
	// pattern, and the field and buttons that add one.
	cmdRevoke         map[string]*widget.Button
	cmdEntry          *widget.Entry
	cmdAllow, cmdDeny *widget.Button
}

func newPermissionBar(u *UI) *permissionBar {
	p := &permissionBar{u: u}
	labels := make([]string, len(tool.Modes))
	for i, m := range tool.Modes {
		labels[i] = m.Label()
	}
	p.mode = widget.NewSelect(labels, p.onMode)
	p.network = widget.NewCheck("Network", p.onNetwork)
	p.sandbox = &widget.Label{Importance: widget.LowImportance}
	p.rules = &widget.Button{Text: "Rules", Icon: theme.ListIcon(), Importance: widget.LowImportance, OnTapped: p.showRules}
	// The bar wraps onto a second row in a narrow chat column rather than
	// widen it: at 960 px with the session list unfolded, "Rules" was
	// drawn over the side panel.
	p.box = container.New(&tw.FlowLayout{}, &widget.Label{Text: "Permissions", Importance: widget.LowImportance}, p.mode, p.network, p.sandbox, p.rules)
	p.box.Hide()
	return p
}

// load shows the open session's mode, switch and sandbox state; nil hides
// the bar (no session open).
func (p *permissionBar) load(live *liveSession) {
	if live == nil || live.sess == nil {
		p.box.Hide()
		return
	}
	p.loading = true
	defer func() { p.loading = false }()
	p.mode.SetSelected(live.sess.Permissions().Mode().Label())
	p.network.SetChecked(live.info.perm.network)
	p.showSandbox(live.info.perm)
	p.box.Show()
}

func modeOfLabel(label string) tool.Mode {
	for _, m := range tool.Modes {
		if m.Label() == label {
			return m
		}
	}
	return tool.ModeAsk
}

func (p *permissionBar) onMode(label string) {
	live := p.u.live
	if p.loading || live == nil || live.sess == nil {
		return
	}
	m := modeOfLabel(label)
	sess := live.sess
	p.u.bridge.Work(func() func() {
		err := sess.Permissions().SetMode(m)
		return func() {
			if err != nil {
				p.u.banner.ShowError("Could not switch the mode: " + err.Error())
				p.loading = true
				p.mode.SetSelected(sess.Permissions().Mode().Label())
				p.loading = false
				return
			}
			p.u.banner.ShowInfo(fmt.Sprintf("%s mode: %s.", m.Label(), m.Explain()))
		}
	})
}

func (p *permissionBar) onNetwork(on bool) {
	live := p.u.live
	if p.loading || live == nil || live.sess == nil {
		return
	}
	sess := live.sess
	if live.job.running {
		p.u.banner.ShowInfo("The network switch applies once the current turn ends.")
	}
	p.u.bridge.Work(func() func() {
		err := sess.Permissions().SetAllowNetwork(on)
		note := sess.Permissions().SandboxNote()
		return func() {
			if err != nil {
				p.u.banner.ShowError("Could not change the network switch: " + err.Error())
				return
			}
			if p.u.live == live {
				live.info.perm.network, live.info.perm.sandbox = on, note
				p.showSandbox(live.info.perm)
			}
		}
	})
}

// showSandbox shows the short sandbox state; the full policy is in the
// Permissions dialog.
func (p *permissionBar) showSandbox(st permState) {
	if st.sandboxed {
		p.sandbox.SetText("sandboxed")
		p.sandbox.Importance = widget.LowImportance
	} else {
		p.sandbox.SetText("not sandboxed")
		p.sandbox.Importance = widget.WarningImportance
	}
	p.sandbox.Refresh()
}

// showRules lists the tools allowed always in this session and the
// workspace's command rules, each with Revoke; the command rules are read
// from the store first, off the UI goroutine.
func (p *permissionBar) showRules() {
	live := p.u.live
	if live == nil || live.sess == nil {
		return
	}
	sess := live.sess
	p.u.bridge.Work(func() func() {
		cmds, err := sess.Permissions().CommandRules()
		return func() {
			if p.u.live == live {
				p.openRules(live, cmds, err)
			}
		}
	})
}

func (p *permissionBar) openRules(live *liveSession, cmds []cmdrule.InForce, cmdErr error) {
	rules := live.sess.Permissions().Rules()
	m := live.sess.Permissions().Mode()
	list := container.NewVBox(
		&widget.Label{Text: m.Label() + " mode: " + m.Explain() + ".", Wrapping: fyne.TextWrapWord},
		&widget.Label{Text: "Commands: " + live.info.perm.sandbox + ".", Wrapping: fyne.TextWrapWord},
		widget.NewSeparator())
	if len(rules) == 0 {
		list.Add(widget.NewLabel("No tool is allowed always in this session."))
	}
	var d dialog.Dialog
	for _, name := range rules {
		row := container.NewBorder(nil, nil, nil,
			&widget.Button{Text: "Revoke", Icon: theme.DeleteIcon(), OnTapped: func() {
				live.sess.Permissions().Revoke(name)
				d.Hide()
				p.u.banner.ShowInfo(name + " asks again from its next call.")
			}},
			widget.NewLabel("Always allow "+name))
		list.Add(row)
	}
	list.Add(widget.NewSeparator())
	list.Add(p.commandRules(live, cmds, cmdErr, func() { d.Hide() }))
	d = dialog.NewCustom("Permissions of this session", "Close", list, p.u.win)
	d.Resize(fyne.NewSize(520, 0))
	d.Show()
}
