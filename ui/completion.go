package ui

import (
	"cmp"
	"context"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// The prompt box's completion list: a "/" at the start of the prompt
// lists the session's slash commands (built-in ones, command files and
// MCP prompts alike), an "@" at the start of a word the
// resources of its MCP servers, each narrowed as the user types. Up and
// Down choose, Enter or Tab picks, Escape closes. The list sits above the
// prompt box, in the window's layout rather than in an overlay, so the
// prompt keeps the keyboard while it is shown.

// The list shows at most maxCompletionRows choices at once, fewer in a
// short window: it takes at most completionShare of the window's height,
// and never fewer than minCompletionRows.
const (
	maxCompletionRows = 6
	minCompletionRows = 2
	completionShare   = 0.3
)

// completionTTL is how long the fetched lists are reused before they are
// asked for again.
const completionTTL = 10 * time.Second

// choice is one row of the list.
type choice struct {
	insert string // what replaces the word being completed
	label  string // the row's first part: "/docs:review <pr> [focus]"
	detail string // its description
	key    string // what the typed filter matches
}

// completer runs the list for the prompt box.
type completer struct {
	u    *UI
	box  *fyne.Container // the list; hidden when there is nothing to show
	rows *fyne.Container

	mode      rune // '/' or '@' while completing, 0 otherwise
	from, to  int  // the word being completed, in runes of the prompt's text
	choices   []choice
	sel, top  int
	dismissed bool // Escape closed the list until the word ends
	hint      string
	picking   bool // the prompt's text is being replaced by a pick

	// What was fetched for sess, and when; loading while a fetch runs.
	sess    *agent.Session
	cmds    []command.Command
	res     []mcp.Resource
	at      time.Time
	loading bool
}

func newCompleter(u *UI) *completer {
	c := &completer{u: u, rows: container.NewVBox()}
	bg := tw.NewThemedRect(theme.ColorNameInputBackground)
	bg.Rounded, bg.Stroke, bg.StrokeWidth = true, theme.ColorNameSeparator, 1
	c.box = container.NewStack(bg, container.NewPadded(c.rows))
	c.box.Hide()
	return c
}

// open reports whether the list offers choices to pick (a hint alone is
// not one).
func (c *completer) open() bool { return c.box.Visible() && len(c.choices) > 0 }

// changed follows the prompt's text: it finds the word being completed,
// fetches the lists when they are missing or old, and shows the choices
// that match.
func (c *completer) changed() { c.update(true) }

// update is changed, fetching the lists only when fetch is set (not when
// they just arrived, which would ask again at once when they are empty).
func (c *completer) update(fetch bool) {
	if c.picking {
		return
	}
	p := c.u.input.prompt
	runes := []rune(p.Text)
	mode, from, to, filter := completionWord(runes, p.CursorTextOffset())
	if mode == 0 || mode != c.mode || from != c.from {
		c.dismissed = false
	}
	c.mode, c.from, c.to = mode, from, to
	c.hint = ""
	c.choices = nil
	if mode == 0 {
		c.hint = c.usageHint(runes)
		c.render()
		return
	}
	if c.dismissed {
		c.render()
		return
	}
	if fetch {
		c.fetch()
	}
	c.choices = c.matching(mode, strings.ToLower(filter))
	c.sel, c.top = 0, 0
	c.render()
}

// completionWord finds the word at the cursor that the list completes: a
// first word starting with "/" while it is the only word (mode '/'), or a
// word starting with "@" that the cursor ends or is inside (mode '@'). It
// returns the word's bounds and the text typed after its first rune.
func completionWord(runes []rune, cursor int) (mode rune, from, to int, filter string) {
	cursor = min(max(cursor, 0), len(runes))
	if len(runes) > 0 && runes[0] == '/' && !slices.ContainsFunc(runes, unicode.IsSpace) {
		return '/', 0, len(runes), string(runes[1:cursor])
	}
	start := cursor
	for start > 0 && !unicode.IsSpace(runes[start-1]) {
		start--
	}
	if start >= len(runes) || runes[start] != '@' || start == cursor {
		return 0, 0, 0, ""
	}
	end := cursor
	for end < len(runes) && !unicode.IsSpace(runes[end]) {
		end++
	}
	return '@', start, end, string(runes[start+1 : cursor])
}

// fetch asks the session for its commands and resources off the UI
// goroutine, unless they are fresh or being fetched; the list follows
// when they arrive.
func (c *completer) fetch() {
	live := c.u.live
	if live == nil || live.sess == nil || c.loading {
		return
	}
	if c.sess == live.sess && time.Since(c.at) < completionTTL {
		return
	}
	c.loading = true
	sess := live.sess
	c.u.bridge.Work(func() func() {
		cmds := sess.Commands().List(context.Background())
		res := sess.Commands().Resources(context.Background())
		return func() {
			c.loading = false
			if c.u.live == nil || c.u.live.sess != sess {
				return
			}
			c.sess, c.cmds, c.res, c.at = sess, cmds, res, time.Now()
			if !slices.ContainsFunc(cmds, func(c command.Command) bool { return c.Source == command.SourceMCP }) && len(res) == 0 {
				c.at = time.Time{} // servers may still be starting: ask again on the next key
			}
			c.update(false)
		}
	})
}

// current reports whether the fetched lists are the shown session's.
func (c *completer) current() bool {
	return c.u.live != nil && c.u.live.sess != nil && c.sess == c.u.live.sess
}

// matching returns the choices of mode whose key holds filter, those it
// starts (after the server's name) first.
func (c *completer) matching(mode rune, filter string) []choice {
	if !c.current() {
		return nil
	}
	var all []choice
	if mode == '/' {
		for _, cmd := range c.cmds {
			all = append(all, choice{insert: "/" + cmd.Name, label: cmd.Usage(), detail: commandDetail(cmd), key: cmd.Name})
		}
	} else {
		for _, r := range c.res {
			detail := cmp.Or(r.Title, r.Name)
			if r.Description != "" {
				detail = strings.TrimSpace(detail + " — " + r.Description)
			}
			if r.Template {
				detail = strings.TrimSpace("template, fill in its {fields} · " + detail)
			}
			all = append(all, choice{insert: mcp.ResourceToken(r), label: "@" + r.Server + ":" + r.URI, detail: detail,
				key: r.Server + ":" + r.URI + " " + r.Name})
		}
	}
	var first, rest []choice
	for _, ch := range all {
		key := strings.ToLower(ch.key)
		_, local, _ := strings.Cut(key, ":")
		switch {
		case strings.HasPrefix(key, filter) || strings.HasPrefix(local, filter):
			first = append(first, ch)
		case strings.Contains(key, filter):
			rest = append(rest, ch)
		}
	}
	return append(first, rest...)
}

// commandDetail is what a command's row says of it: its description (or
// why it cannot be used) and, for a built-in command or a command file,
// where it comes from.
func commandDetail(cmd command.Command) string {
	about := cmd.Description
	if cmd.Problem != "" {
		about = "cannot be used: " + cmd.Problem
	}
	switch {
	case cmd.Source == command.SourceBuiltin:
		return strings.TrimPrefix(about+" · built-in", " · ")
	case cmd.File != "":
		return strings.TrimPrefix(about+" · "+cmd.File, " · ")
	}
	return about
}

// usageHint is the usage of the command the prompt starts with, once its
// arguments are being typed, or "".
func (c *completer) usageHint(runes []rune) string {
	if len(runes) == 0 || runes[0] != '/' || !c.current() {
		return ""
	}
	i := slices.IndexFunc(runes, unicode.IsSpace)
	if i < 0 {
		return ""
	}
	name := string(runes[1:i])
	for _, cmd := range c.cmds {
		if cmd.Name != name || cmd.Hint == "" {
			continue
		}
		if len(cmd.Args) == 0 {
			return strings.TrimSuffix("usage: "+cmd.Usage()+" · "+cmd.Description, " · ")
		}
		var about []string
		for _, a := range cmd.Args {
			if a.Description != "" {
				about = append(about, a.Name+": "+a.Description)
			}
		}
		hint := "usage: " + cmd.Usage() + "  (values in order, or name=value)"
		if len(about) > 0 {
			hint += " · " + strings.Join(about, " · ")
		}
		return hint
	}
	return ""
}

// key handles the list's keys while it offers choices and reports whether
// it took the key.
func (c *completer) key(ev *fyne.KeyEvent) bool {
	if !c.open() {
		return false
	}
	switch ev.Name {
	case fyne.KeyUp:
		c.move(-1)
	case fyne.KeyDown:
		c.move(1)
	case fyne.KeyReturn, fyne.KeyEnter, fyne.KeyTab:
		c.pick(c.sel)
	case fyne.KeyEscape:
		c.dismissed = true
		c.choices = nil
		c.render()
	default:
		return false
	}
	return true
}

// move moves the selection by d, wrapping around, and scrolls it into
// view.
func (c *completer) move(d int) {
	n, rows := len(c.choices), c.visibleRows()
	c.sel = ((c.sel+d)%n + n) % n
	if c.sel < c.top {
		c.top = c.sel
	}
	if c.sel >= c.top+rows {
		c.top = c.sel - rows + 1
	}
	c.render()
}

// visibleRows is how many choices fit the window's share for the list.
func (c *completer) visibleRows() int {
	row := newCompletionRow(choice{label: "/x"}, false, nil).MinSize().Height + theme.Padding()
	h := c.u.win.Canvas().Size().Height
	if row <= 0 || h <= 0 {
		return maxCompletionRows
	}
	return min(max(int(h*completionShare/row), minCompletionRows), maxCompletionRows)
}

// pick replaces the word being completed with choice i and a space, with
// the cursor after it.
func (c *completer) pick(i int) {
	if i < 0 || i >= len(c.choices) {
		return
	}
	p := c.u.input.prompt
	runes := []rune(p.Text)
	from, to := min(c.from, len(runes)), min(c.to, len(runes))
	insert := []rune(c.choices[i].insert + " ")
	out := slices.Concat(runes[:from], insert, runes[to:])
	c.picking = true
	p.SetText(string(out))
	c.picking = false
	p.setCursor(from + len(insert))
	c.changed()
}

// render shows the rows of the choices in view, or the hint, or hides
// the list.
func (c *completer) render() {
	var objs []fyne.CanvasObject
	switch {
	case len(c.choices) > 0:
		end := min(c.top+c.visibleRows(), len(c.choices))
		for i := c.top; i < end; i++ {
			objs = append(objs, newCompletionRow(c.choices[i], i == c.sel, func() { c.pick(i) }))
		}
		what := "commands"
		if c.mode == '@' {
			what = "resources"
		}
		foot := fmt.Sprintf("%d–%d of %d %s · ↑↓ to choose · Enter or Tab to pick · Esc to close", c.top+1, end, len(c.choices), what)
		objs = append(objs, &widget.Label{Text: foot, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText, Truncation: fyne.TextTruncateEllipsis})
	case c.hint != "":
		objs = append(objs, &widget.Label{Text: c.hint, Importance: widget.LowImportance, Truncation: fyne.TextTruncateEllipsis})
	}
	c.rows.Objects = objs
	c.rows.Refresh()
	if len(objs) == 0 {
		c.box.Hide()
	} else {
		c.box.Show()
	}
}

// completionRow is one choice of the list; tapping it picks it.
type completionRow struct {
	widget.BaseWidget
	ch       choice
	selected bool
	onTap    func()
}

func newCompletionRow(ch choice, selected bool, onTap func()) *completionRow {
	r := &completionRow{ch: ch, selected: selected, onTap: onTap}
	r.ExtendBaseWidget(r)
	return r
}

// Tapped implements fyne.Tappable.
func (r *completionRow) Tapped(*fyne.PointEvent) {
	if r.onTap != nil {
		r.onTap()
	}
}

// CreateRenderer implements fyne.Widget.
func (r *completionRow) CreateRenderer() fyne.WidgetRenderer {
	var bg color.Color = color.Transparent
	if r.selected {
		bg = theme.Color(theme.ColorNameSelection)
	}
	label := &widget.Label{Text: text.Clip(r.ch.label, 60), TextStyle: fyne.TextStyle{Bold: true}}
	detail := &widget.Label{Text: text.OneLine(r.ch.detail, 200), Importance: widget.LowImportance, Truncation: fyne.TextTruncateEllipsis}
	rect := canvas.NewRectangle(bg)
	rect.CornerRadius = theme.Size(theme.SizeNameInputRadius)
	return widget.NewSimpleRenderer(container.NewStack(rect, container.NewBorder(nil, nil, label, nil, detail)))
}
