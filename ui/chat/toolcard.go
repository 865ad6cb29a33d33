package chat

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
	ToolRunning  = "running…"
	ToolWaiting  = "awaiting approval"
	toolOK       = "ok"
	toolFailed   = "error"
	ToolDenied   = "denied"
	ToolStopped  = "cancelled"
	resultScroll = 220 // height of an expanded long result
)

// ToolCard shows one tool call: the real path or command in its title, the
// arguments, Approve / Deny / Always allow while it waits for the user, and
// its result, collapsed until asked for.
type ToolCard struct {
	widget.BaseWidget

	Item     *Item // the call shown
	onDecide func(it *Item, d tool.Decision)
	onToggle func(it *Item)
	onDiags  func(it *Item) // opens or closes the list of findings
	// onCommand opens "Always allow this command" for a run_shell call.
	onCommand func(it *Item)

	border   *canvas.Rectangle
	Title    *widget.Label   // the call's title
	Status   *widget.Label   // its state line
	Args     *widget.Label   // its arguments
	DiffBox  *fyne.Container // the proposed change of an edit, with a tick per hunk
	Approve  *widget.Button  // answers yes once
	Deny     *widget.Button  // answers no
	Always   *widget.Button  // answers yes for the session
	Command  *widget.Button  // always allow this command (a workspace rule)
	CmdRow   *fyne.Container // the command rule's row
	Buttons  *fyne.Container // the answers' row
	decision *widget.Label
	Note     *widget.Label // why this approval is special (not sandboxed, a secret file)
	toggle   *widget.Button
	result   *widget.Label
	scroll   *container.Scroll
	short    *widget.Label
	Child    *childCard // the sub-agent of a task call

	DiagBadge  *widget.Label   // "2 errors · 1 warning" about the call's file
	DiagToggle *widget.Button  // opens the list of them
	DiagRow    *fyne.Container // the badge and the toggle, under the title
	DiagList   *fyne.Container // "line:col severity message", one a line
}

func newToolCard(onDecide func(*Item, tool.Decision), onToggle func(*Item), onChild [2]func(*Item)) *ToolCard {
	c := &ToolCard{onDecide: onDecide, onToggle: onToggle}
	c.Child = newChildCard(onChild[0], onChild[1])
	c.border = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	c.border.StrokeColor = theme.Color(theme.ColorNameSeparator)
	c.border.StrokeWidth = 1
	c.border.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	c.Title = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true, Bold: true}, Truncation: fyne.TextTruncateEllipsis}
	c.Status = &widget.Label{Importance: widget.LowImportance}
	c.Args = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	c.DiffBox = container.NewVBox()
	c.Approve = &widget.Button{Text: "Approve", Icon: theme.ConfirmIcon(), Importance: widget.HighImportance,
		OnTapped: func() { c.decide(tool.Approve) }}
	c.Deny = &widget.Button{Text: "Deny", Icon: theme.CancelIcon(), OnTapped: func() { c.decide(tool.Deny) }}
	c.Always = &widget.Button{Text: "Always allow", OnTapped: func() { c.decide(tool.ApproveAlways) }}
	c.Command = &widget.Button{Text: "Always allow this command…", OnTapped: func() {
		if c.Item != nil && c.onCommand != nil {
			c.onCommand(c.Item)
		}
	}}
	c.CmdRow = container.NewHBox(c.Command)
	c.Buttons = container.NewVBox(container.NewHBox(c.Approve, c.Deny, c.Always), c.CmdRow)
	c.decision = &widget.Label{Importance: widget.LowImportance}
	c.Note = &widget.Label{Importance: widget.WarningImportance, Wrapping: fyne.TextWrapWord}
	c.toggle = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading,
		OnTapped: func() {
			if c.Item != nil && c.onToggle != nil {
				c.onToggle(c.Item)
			}
		}}
	c.result = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	c.scroll = container.NewVScroll(c.result)
	c.scroll.SetMinSize(fyne.NewSize(0, resultScroll))
	c.short = &widget.Label{TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	c.DiagBadge = &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
	c.DiagToggle = &widget.Button{Importance: widget.LowImportance, Alignment: widget.ButtonAlignLeading,
		OnTapped: func() {
			if c.Item != nil && c.onDiags != nil {
				c.onDiags(c.Item)
			}
		}}
	c.DiagRow = container.NewHBox(c.DiagBadge, c.DiagToggle)
	c.DiagList = container.NewVBox()
	c.ExtendBaseWidget(c)
	return c
}

func (c *ToolCard) decide(d tool.Decision) {
	if c.Item != nil && c.onDecide != nil {
		c.onDecide(c.Item, d)
	}
}

// set shows it.
func (c *ToolCard) set(it *Item) {
	c.Item = it
	c.Title.SetText(it.Title)
	c.Child.set(it)
	st := it.Status
	if it.hasResult && it.resultErr && st == toolOK {
		st = toolFailed
	}
	if it.Redacted > 0 {
		st += " · " + text.Plural(it.Redacted, "secret") + " redacted"
	}
	c.Status.SetText(st)
	switch st {
	case toolFailed, ToolDenied:
		c.Status.Importance = widget.DangerImportance
	case ToolWaiting:
		c.Status.Importance = widget.WarningImportance
	case toolOK:
		c.Status.Importance = widget.SuccessImportance
	default:
		c.Status.Importance = widget.LowImportance
	}
	c.Status.Refresh()
	pending := it.Approval != nil
	c.DiffBox.Hide()
	c.Approve.SetText("Approve")
	c.Approve.Enable()
	switch {
	case pending && it.Approval.Req.Diff != nil:
		c.Args.Hide()
		p := it.Approval
		c.DiffBox.Objects = []fyne.CanvasObject{tw.DiffView(p.Req.Diff, p.Accepted, func() { c.showTicks(p) })}
		c.DiffBox.Refresh()
		c.DiffBox.Show()
		c.showTicks(p)
	case pending:
		c.Args.SetText(approvalText(it.Approval.Req))
		c.Args.Show()
	case it.Expanded:
		c.Args.SetText(it.ArgsText)
		c.Args.Show()
	default:
		c.Args.Hide()
	}
	c.Note.Hide()
	if pending {
		c.Always.SetText("Always allow " + it.Call.Name + " in this session")
		tw.ShowIf(c.Always, !it.Approval.Req.NoAlways)
		c.Command.SetText(commandButtonText(it.Approval.Req.CommandRules))
		tw.ShowIf(c.CmdRow, len(it.Approval.Req.CommandRules) > 0)
		var lines []string
		if n := it.Approval.Req.Note; n != "" {
			lines = append(lines, "⚠ "+n)
		}
		if sb := it.Approval.Req.Sandbox; sb != "" {
			lines = append(lines, sb) // every command's card says where it runs and whether it may connect
		}
		if len(lines) > 0 {
			c.Note.SetText(strings.Join(lines, "\n"))
			c.Note.Show()
		}
		c.Buttons.Show()
	} else {
		c.Buttons.Hide()
	}
	if it.Decided != "" {
		c.decision.SetText(it.Decided)
		c.decision.Show()
	} else {
		c.decision.Hide()
	}
	c.scroll.Hide()
	c.short.Hide()
	if it.hasResult {
		arrow := "▸"
		if it.Expanded {
			arrow = "▾"
		}
		c.toggle.SetText(fmt.Sprintf("%s Result (%s chars)", arrow, text.Thousands(it.resultLen)))
		c.toggle.Show()
		if it.Expanded {
			if it.longResult() {
				c.result.SetText(it.Result)
				c.scroll.Show()
			} else {
				c.short.SetText(it.Result)
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
func (c *ToolCard) showDiagnostics(it *Item) {
	if len(it.Diags) == 0 {
		c.DiagRow.Hide()
		c.DiagList.Hide()
		return
	}
	c.DiagRow.Show()
	badge, imp := CardDiagnosticsBadge(it.Diags)
	c.DiagBadge.Text, c.DiagBadge.Importance = badge, imp
	c.DiagBadge.Refresh()
	arrow := "▸"
	if it.diagsOpen {
		arrow = "▾"
	}
	c.DiagToggle.SetText(fmt.Sprintf("%s Diagnostics (%d)", arrow, len(it.Diags)))
	if it.diagsOpen {
		c.DiagList.Objects = diagnosticLabels(it.Diags)
		c.DiagList.Refresh()
		c.DiagList.Show()
	} else {
		c.DiagList.Objects = nil
		c.DiagList.Hide()
	}
}

// showTicks names on the Approve button how many of the change's hunks
// will be written; with none ticked only Deny is left.
func (c *ToolCard) showTicks(p *Approval) {
	n, all := tw.Ticked(p.Accepted), len(p.Accepted)
	switch {
	case all <= 1 || n == all:
		c.Approve.SetText("Approve")
		c.Approve.Enable()
	case n == 0:
		c.Approve.SetText("Tick a change to approve")
		c.Approve.Disable()
	default:
		c.Approve.SetText(fmt.Sprintf("Approve %d of %d changes", n, all))
		c.Approve.Enable()
	}
}

// CreateRenderer implements fyne.Widget.
func (c *ToolCard) CreateRenderer() fyne.WidgetRenderer {
	head := container.NewBorder(nil, nil, nil, c.Status, c.Title)
	body := container.NewVBox(head, c.DiagRow, c.DiagList, c.Args, c.DiffBox, c.Note, c.Buttons, c.decision, c.Child.Box, c.toggle, c.short, c.scroll)
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

// ArgsDisplay renders a call's arguments for people: an edit as a small
// diff, a command as itself, anything else as indented JSON.
func ArgsDisplay(name, args string) string { return argsView(name, args, tw.ClipForDisplay) }

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

// commandButtonText is the card's button for the rules a command call
// proposes.
func commandButtonText(rules []string) string {
	if len(rules) > 1 {
		return "Always allow these commands…"
	}
	return "Always allow this command…"
}
