package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Tool call states shown on a card.
const (
	toolQueued   = "queued"
	toolRunning  = "running…"
	toolWaiting  = "awaiting approval"
	toolOK       = "ok"
	toolFailed   = "error"
	toolDenied   = "denied"
	toolStopped  = "cancelled"
	resultScroll = 220 // height of an expanded long result
)

// toolCard shows one tool call: the real path or command in its title, the
// arguments, Approve / Deny / Always allow while it waits for the user, and
// its result, collapsed until asked for.
type toolCard struct {
	widget.BaseWidget

	item     *chatItem
	onDecide func(it *chatItem, d tool.Decision)
	onToggle func(it *chatItem)
	onDiags  func(it *chatItem) // opens or closes the list of findings
	// onCommand opens "Always allow this command" for a run_shell call.
	onCommand func(it *chatItem)

	border   *canvas.Rectangle
	title    *widget.Label
	status   *widget.Label
	args     *widget.Label
	diffBox  *fyne.Container // the proposed change of an edit, with a tick per hunk
	approve  *widget.Button
	deny     *widget.Button
	always   *widget.Button
	command  *widget.Button // always allow this command (a workspace rule)
	cmdRow   *fyne.Container
	buttons  *fyne.Container
	decision *widget.Label
	note     *widget.Label // why this approval is special (not sandboxed, a secret file)
	toggle   *widget.Button
	result   *widget.Label
	scroll   *container.Scroll
	short    *widget.Label
	child    *childCard // the sub-agent of a task call

	diagBadge  *widget.Label   // "2 errors · 1 warning" about the call's file
	diagToggle *widget.Button  // opens the list of them
	diagRow    *fyne.Container // the badge and the toggle, under the title
	diagList   *fyne.Container // "line:col severity message", one a line
}

func newToolCard(onDecide func(*chatItem, tool.Decision), onToggle func(*chatItem), onChild [2]func(*chatItem)) *toolCard {
	c := &toolCard{onDecide: onDecide, onToggle: onToggle}
	c.child = newChildCard(onChild[0], onChild[1])
	c.border = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	c.border.StrokeColor = theme.Color(theme.ColorNameSeparator)
	c.border.StrokeWidth = 1
	c.border.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	c.title = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true, Bold: true}, Truncation: fyne.TextTruncateEllipsis}
	c.status = &widget.Label{Importance: widget.LowImportance}
	c.args = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	c.diffBox = container.NewVBox()
	c.approve = &widget.Button{Text: "Approve", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance,
		OnTapped: func() { c.decide(tool.Approve) }}
	c.deny = &widget.Button{Text: "Deny", Icon: theme.CancelIcon(), OnTapped: func() { c.decide(tool.Deny) }}
	c.always = &widget.Button{Text: "Always allow", OnTapped: func() { c.decide(tool.ApproveAlways) }}
	c.command = &widget.Button{Text: "Always allow this command…", OnTapped: func() {
		if c.item != nil && c.onCommand != nil {
			c.onCommand(c.item)
		}
	}}
	c.cmdRow = container.NewHBox(c.command)
	c.buttons = container.NewVBox(container.NewHBox(c.approve, c.deny, c.always), c.cmdRow)
	c.decision = &widget.Label{Importance: widget.LowImportance}
	c.note = &widget.Label{Importance: widget.WarningImportance, Wrapping: fyne.TextWrapWord}
	c.toggle = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading,
		OnTapped: func() {
			if c.item != nil && c.onToggle != nil {
				c.onToggle(c.item)
			}
		}}
	c.result = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	c.scroll = container.NewVScroll(c.result)
	c.scroll.SetMinSize(fyne.NewSize(0, resultScroll))
	c.short = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	c.diagBadge = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
	c.diagToggle = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading,
		OnTapped: func() {
			if c.item != nil && c.onDiags != nil {
				c.onDiags(c.item)
			}
		}}
	c.diagRow = container.NewHBox(c.diagBadge, c.diagToggle)
	c.diagList = container.NewVBox()
	c.ExtendBaseWidget(c)
	return c
}

func (c *toolCard) decide(d tool.Decision) {
	if c.item != nil && c.onDecide != nil {
		c.onDecide(c.item, d)
	}
}

// set shows it.
func (c *toolCard) set(it *chatItem) {
	c.item = it
	c.title.SetText(it.title)
	c.child.set(it)
	st := it.status
	if it.hasResult && it.resultErr && st == toolOK {
		st = toolFailed
	}
	if it.redacted > 0 {
		st += " · " + text.Plural(it.redacted, "secret") + " redacted"
	}
	c.status.SetText(st)
	switch st {
	case toolFailed, toolDenied:
		c.status.Importance = widget.DangerImportance
	case toolWaiting:
		c.status.Importance = widget.WarningImportance
	case toolOK:
		c.status.Importance = widget.SuccessImportance
	default:
		c.status.Importance = widget.LowImportance
	}
	c.status.Refresh()
	pending := it.approval != nil
	c.diffBox.Hide()
	c.approve.SetText("Approve")
	c.approve.Enable()
	switch {
	case pending && it.approval.req.Diff != nil:
		c.args.Hide()
		p := it.approval
		c.diffBox.Objects = []fyne.CanvasObject{tw.DiffView(p.req.Diff, p.accepted, func() { c.showTicks(p) })}
		c.diffBox.Refresh()
		c.diffBox.Show()
		c.showTicks(p)
	case pending:
		c.args.SetText(approvalText(it.approval.req))
		c.args.Show()
	case it.expanded:
		c.args.SetText(it.argsText)
		c.args.Show()
	default:
		c.args.Hide()
	}
	c.note.Hide()
	if pending {
		c.always.SetText("Always allow " + it.call.Name + " in this session")
		tw.ShowIf(c.always, !it.approval.req.NoAlways)
		c.command.SetText(commandButtonText(it.approval.req.CommandRules))
		tw.ShowIf(c.cmdRow, len(it.approval.req.CommandRules) > 0)
		var lines []string
		if n := it.approval.req.Note; n != "" {
			lines = append(lines, "⚠ "+n)
		}
		if sb := it.approval.req.Sandbox; sb != "" {
			lines = append(lines, sb) // every command's card says where it runs and whether it may connect
		}
		if len(lines) > 0 {
			c.note.SetText(strings.Join(lines, "\n"))
			c.note.Show()
		}
		c.buttons.Show()
	} else {
		c.buttons.Hide()
	}
	if it.decided != "" {
		c.decision.SetText(it.decided)
		c.decision.Show()
	} else {
		c.decision.Hide()
	}
	c.scroll.Hide()
	c.short.Hide()
	if it.hasResult {
		arrow := "▸"
		if it.expanded {
			arrow = "▾"
		}
		c.toggle.SetText(fmt.Sprintf("%s Result (%s chars)", arrow, text.Thousands(it.resultLen)))
		c.toggle.Show()
		if it.expanded {
			if it.longResult() {
				c.result.SetText(it.result)
				c.scroll.Show()
			} else {
				c.short.SetText(it.result)
				c.short.Show()
			}
		}
	} else {
		c.toggle.Hide()
	}
	c.showDiagnostics(it)
	c.border.FillColor = theme.Color(theme.ColorNameInputBackground)
	c.border.StrokeColor = theme.Color(theme.ColorNameSeparator)
	if pending {
		c.border.StrokeColor = theme.Color(theme.ColorNameWarning)
	}
	c.border.Refresh()
}

// showDiagnostics shows the findings about the call's file: the badge,
// the toggle and, opened, their list; a call without any shows none.
func (c *toolCard) showDiagnostics(it *chatItem) {
	if len(it.diags) == 0 {
		c.diagRow.Hide()
		c.diagList.Hide()
		return
	}
	c.diagRow.Show()
	badge, imp := cardDiagnosticsBadge(it.diags)
	c.diagBadge.Text, c.diagBadge.Importance = badge, imp
	c.diagBadge.Refresh()
	arrow := "▸"
	if it.diagsOpen {
		arrow = "▾"
	}
	c.diagToggle.SetText(fmt.Sprintf("%s Diagnostics (%d)", arrow, len(it.diags)))
	if it.diagsOpen {
		c.diagList.Objects = diagnosticLabels(it.diags)
		c.diagList.Refresh()
		c.diagList.Show()
	} else {
		c.diagList.Objects = nil
		c.diagList.Hide()
	}
}

// showTicks names on the Approve button how many of the change's hunks
// will be written; with none ticked only Deny is left.
func (c *toolCard) showTicks(p *pendingApproval) {
	n, all := tw.Ticked(p.accepted), len(p.accepted)
	switch {
	case all <= 1 || n == all:
		c.approve.SetText("Approve")
		c.approve.Enable()
	case n == 0:
		c.approve.SetText("Tick a change to approve")
		c.approve.Disable()
	default:
		c.approve.SetText(fmt.Sprintf("Approve %d of %d changes", n, all))
		c.approve.Enable()
	}
}

// CreateRenderer implements fyne.Widget.
func (c *toolCard) CreateRenderer() fyne.WidgetRenderer {
	head := container.NewBorder(nil, nil, nil, c.status, c.title)
	body := container.NewVBox(head, c.diagRow, c.diagList, c.args, c.diffBox, c.note, c.buttons, c.decision, c.child.box, c.toggle, c.short, c.scroll)
	return widget.NewSimpleRenderer(container.NewStack(c.border, container.NewPadded(body)))
}

// approvalText is what a card waiting for approval shows: never cut, so
// nothing of what will run is out of sight. Edits keep their small diff;
// every other call shows tool.Display's rendering (the whole command with
// control characters and padding made visible).
func approvalText(r tool.ApprovalRequest) string {
	switch r.Tool {
	case "edit_file", "write_file":
		return argsView(r.Tool, r.Arguments, func(s string) string { return s })
	}
	if r.Display != "" {
		return r.Display
	}
	d, _ := tool.Display(r.Tool, json.RawMessage(r.Arguments))
	return d
}

// argsDisplay renders a call's arguments for people: an edit as a small
// diff, a command as itself, anything else as indented JSON.
func argsDisplay(name, args string) string { return argsView(name, args, tw.ClipForDisplay) }

// argsView is argsDisplay with the clipping rule given.
func argsView(name, args string, clip func(string) string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return clip(args)
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	switch name {
	case "edit_file":
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n", str("path"))
		for _, l := range strings.Split(str("old_string"), "\n") {
			b.WriteString("- " + l + "\n")
		}
		for _, l := range strings.Split(str("new_string"), "\n") {
			b.WriteString("+ " + l + "\n")
		}
		return clip(strings.TrimRight(b.String(), "\n"))
	case "run_shell":
		return clip("$ " + str("command"))
	case "write_file":
		return clip(str("path") + "\n" + str("content"))
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return clip(args)
	}
	return clip(string(b))
}
