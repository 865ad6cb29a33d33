package chat

import (
	"encoding/json"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	tw "github.com/tally-dev/tally/ui/widget"
)

// ItemKind is what a chat row shows.
type ItemKind int

// The kinds of chat row.
const (
	ItemUser      ItemKind = iota // a message the user sent
	ItemAssistant                 // a reply of the model
	ItemTool                      // a tool call with its result
	ItemNotice                    // a line of the app's own (an error, a stop)
	ItemRebuild                   // a compaction or a new cycle, with its summary or brief
	ItemCycle                     // an earlier, closed cycle: collapsed, expands to its messages
	itemRewind                    // a rewind of the conversation: collapsed, expands to the messages it took out
)

// Item is one row of the chat. Items are only touched on the UI
// goroutine.
type Item struct {
	Kind      ItemKind // what the row shows
	Text      string   // the message's text, or the notice
	Reasoning string   // a reply's reasoning, or a rebuild row's detail
	Streaming bool     // an assistant reply still arriving: plain text
	// Stopped marks a reply the user stopped, Closed one cut short when
	// Tally closed; Unsaved, one the engine did not keep (it is only
	// shown, the model never sees it).
	Stopped, Closed, Unsaved bool
	md                       *tw.Doc // a finished reply's Markdown, while parsed (see doc)
	ReasonOn                 bool    // the reasoning (or detail, or past rows) is shown
	isError                  bool    // notices: an error
	// DetailName names the expandable text of a rebuild row ("Summary");
	// the text itself is kept in reasoning.
	DetailName string
	// past holds an earlier cycle's messages (itemCycle); pastItems are
	// their rows once expanded (reasonOn says whether they are shown), or
	// the rows a rewind took out (itemRewind).
	past      []transcript.Message
	PastItems []*Item // rows of the past messages, once expanded
	// Superseded marks a row a rewind took out of the conversation: it is
	// drawn greyed.
	Superseded bool
	CycleNo    int            // the closed cycle an itemCycle row stands for
	Child      *subagent.Info // the sub-agent running a task call, once it started
	// LogIndex is a user message's index in the current cycle's log, -1
	// for messages outside it (earlier cycles, superseded ones). A
	// rewrite of the log moves it, so a rewind finds its turn by sent
	// and sha (the time and body hash of the message) instead.
	LogIndex int
	Sent     time.Time             // when the message was sent
	Sha      string                // the body hash of the message (see bodyHash)
	Images   []transcript.ImageRef // the pictures the message carries, shown as thumbnails

	Call      transcript.ToolCall // a tool row's call
	Title     string              // a tool row's title line
	ArgsText  string              // the call's arguments, shown
	Status    string              // the call's state line
	Result    string              // the call's result, shown
	resultLen int                 // a tool result's length; the messages a rewind took out
	resultErr bool
	hasResult bool
	Expanded  bool      // the result is unfolded
	Approval  *Approval // the question waiting on this call, if any
	Decided   string    // the answer the user gave to it
	Redacted  int       // secrets replaced in the result at intake
	// Diags are the findings about this call's file from its round's
	// <diagnostics> message; diagsOpen shows their list.
	Diags     []lsp.Diagnostic
	diagsOpen bool

	measuredAt float32 // width of the last exact measurement; 0: estimated
}

func (it *Item) longResult() bool {
	return len(it.Result) > 1200 || strings.Count(it.Result, "\n") > 14
}

// copyText is what the Copy button puts on the clipboard.
func (it *Item) copyText() string {
	switch it.Kind {
	case ItemTool:
		s := it.Title + "\n" + it.ArgsText
		if it.hasResult {
			s += "\n\n" + it.Result
		}
		return s
	}
	return it.Text
}

// View is the conversation: a virtualized list whose rows are measured
// at the list's real width whenever their content or the width changes.
type View struct {
	// Filled, when set, is called whenever a row comes into view and is
	// filled (see UI.memoryReleaser).
	Filled   func()
	List     *List                // the virtualized list of rows
	Box      *fyne.Container      // the list with its jump button, for the window
	est      map[ItemKind]float32 // one-line height of each kind at width
	estW     float32
	lineH    float32
	charW    float32
	Items    []*Item          // the rows, top to bottom
	ByCall   map[string]*Item // the tool rows by call ID
	width    float32
	measurer *MessageRow
	later    func(func()) // runs a function on the UI goroutine after this one
	// stickBottom is set while a freshly loaded list should end up at its
	// bottom whatever the first layout does.
	stickBottom bool
	autoOffset  float32           // the offset of the last automatic scroll to the bottom
	Jump        *widget.Button    // "Jump to latest", shown while the end is out of view
	jumpLayer   fyne.CanvasObject // holds jump over the list's bottom right corner
	checking    bool              // a check of the jump button is queued
	toEnd       bool              // a scroll to the bottom is queued
	endShown    bool              // the end of the chat was in view at the last check

	AwaitNext *Item             // the last rewrite's row, until the next request's size is known
	Found     *Item             // the row a search result last scrolled to
	rewound   map[string]int    // files each rewind of this window restored, by rewindKey
	curIndex  int               // the log index addMessage gives user rows, -1 outside the log
	OnRewind  func(it *Item)    // a user row's Rewind
	OnFork    func(it *Item)    // a user row's Fork: a new session from the end of its turn
	OnChild   [2]func(it *Item) // a sub-agent card's Transcript and Stop
	OnCommand func(it *Item)    // a command card's "Always allow this command"

	// round holds the tool cards of the last model message that made
	// calls, which its <diagnostics> message is spread over.
	round []*Item

	onDecide func(it *Item, d tool.Decision)
	Thumbs   thumbs // the pictures' thumbnails (see chat_images.go)
	docs     docRing
	copy     func(string)
	Deltas   int // streamed updates shown, for tests and diagnostics
}

// New returns an empty chat view: later runs a function on the UI goroutine
// after the current one, onDecide answers a tool card's approval and copyFn
// puts text on the clipboard.
func New(later func(func()), onDecide func(*Item, tool.Decision), copyFn func(string)) *View {
	c := &View{ByCall: map[string]*Item{}, later: later, onDecide: onDecide, copy: copyFn, curIndex: -1}
	c.measurer = NewMessageRow(c)
	c.List = c.newList()
	c.List.OnKey = func(ev *fyne.KeyEvent) { c.Key(ev) } // the window adds its keys (installShortcuts)
	c.newJump()
	c.Box = container.New(&tw.WidthWatcher{OnWidth: c.widthChanged, OnHeight: c.heightChanged}, c.List, c.jumpLayer)
	return c
}

// newList makes the chat's list. A row that comes into view gets the
// height it needs at the list's width there and then (see fitShown).
func (c *View) newList() *List {
	return NewList(
		func() int { return len(c.Items) },
		func() fyne.CanvasObject { return NewMessageRow(c) },
		func(id int, o fyne.CanvasObject) {
			if id < len(c.Items) {
				r := o.(*MessageRow)
				r.Set(c.Items[id])
				c.fitShown(id, r)
				c.scrolledLater() // a scroll shows new rows
				if c.Filled != nil {
					c.Filled()
				}
			}
		})
}

// SetMessages replaces the conversation with msgs.
func (c *View) SetMessages(msgs []transcript.Message) {
	c.Items = c.Items[:0]
	c.List.truncate(0)
	c.Thumbs.forget()
	c.ByCall = map[string]*Item{}
	c.AwaitNext = nil
	c.round = nil
	for i := range msgs {
		c.curIndex = i
		c.addMessage(&msgs[i])
	}
	c.curIndex = -1
	c.rebuild(false)
}

// SetHistory shows a reopened conversation whole: for each earlier rewrite
// of the log, the messages it removed and a row saying what happened; then
// the messages the log holds now.
func (c *View) SetHistory(cycles []cycle.Archive, past []agent.PastRebuild, msgs []transcript.Message) {
	c.Items = c.Items[:0]
	c.List.truncate(0)
	c.Thumbs.forget()
	c.ByCall = map[string]*Item{}
	c.AwaitNext = nil
	c.round = nil
	for _, a := range cycles {
		c.Items = append(c.Items, cycleItem(a))
	}
	if steps, ok := transcript.History(rewrites(past), msgs); ok {
		c.Items = append(c.Items, c.stepItems(past, steps)...)
	} else {
		var kept []agent.PastRebuild // records of an older Tally: the rebuilds that kept messages aside
		for _, p := range past {
			if len(p.Superseded) > 0 {
				kept = append(kept, p)
			}
		}
		c.Items = append(c.Items, c.historyItems(kept, msgs)...)
	}
	c.rebuild(false)
}

// Clear empties the chat.
func (c *View) Clear() { c.SetMessages(nil) }

// addMessage turns a committed message into items (no measuring).
func (c *View) addMessage(m *transcript.Message) {
	switch {
	case m.Role == transcript.User && m.Kind == transcript.KindChat:
		c.round = nil
		c.Items = append(c.Items, &Item{Kind: ItemUser, Text: m.Body(), LogIndex: c.curIndex, Sent: m.Time, Sha: bodyHash(m.Body()), Images: m.Images()})
	case m.Role == transcript.User && m.Kind == transcript.KindDiagnostics:
		// The whole message stays, collapsed; its findings go on the
		// round's cards.
		c.Items = append(c.Items, &Item{Kind: ItemNotice, Text: noticeFor(m), Reasoning: m.Body(), DetailName: "Diagnostics"})
		SpreadDiagnostics(c.round, ParseDiagnostics(m.Body()))
	case m.Role == transcript.User:
		c.Items = append(c.Items, &Item{Kind: ItemNotice, Text: noticeFor(m), Images: m.Images()})
	case m.Role == transcript.Assistant:
		if strings.TrimSpace(m.Text()) != "" || m.Reasoning != "" {
			it := &Item{Kind: ItemAssistant, Text: m.Text(), Reasoning: m.Reasoning}
			if t, ok := strings.CutSuffix(strings.TrimRight(it.Text, " \n"), step.StoppedNote); ok {
				it.Text, it.Stopped = strings.TrimRight(t, " \n"), true
			} else if t, ok := strings.CutSuffix(strings.TrimRight(it.Text, " \n"), step.ClosedNote); ok {
				it.Text, it.Closed = strings.TrimRight(t, " \n"), true
			}
			c.Items = append(c.Items, it)
		}
		if len(m.ToolCalls) > 0 {
			c.round = nil
		}
		for _, call := range m.ToolCalls {
			it := &Item{Kind: ItemTool, Call: call, Status: toolQueued,
				Title: tool.Summarize(call.Name, json.RawMessage(call.Arguments)), ArgsText: ArgsDisplay(call.Name, call.Arguments)}
			c.Items = append(c.Items, it)
			c.ByCall[call.ID] = it
			c.round = append(c.round, it)
		}
	case m.Role == transcript.Tool:
		it := c.ByCall[m.ToolCallID]
		if it == nil {
			call := transcript.ToolCall{ID: m.ToolCallID, Name: m.ToolName}
			it = &Item{Kind: ItemTool, Call: call, Title: m.ToolName}
			c.Items = append(c.Items, it)
			c.ByCall[m.ToolCallID] = it
		}
		text := m.Text()
		it.Result, it.resultLen, it.resultErr, it.hasResult = tw.ClipForDisplay(text), len([]rune(text)), m.IsError, true
		it.Redacted = m.Redacted
		it.Status = statusOfResult(text, m.IsError)
	}
}

func statusOfResult(text string, isErr bool) string {
	if !isErr {
		return toolOK
	}
	t := strings.ToLower(strings.TrimSpace(text))
	switch {
	case strings.HasPrefix(t, "denied") || strings.Contains(t, "user denied"):
		return ToolDenied
	case strings.HasPrefix(t, "cancelled") || strings.HasPrefix(t, "interrupted"):
		return ToolStopped
	}
	return toolFailed
}

// noticeFor describes an engine-injected message in one line.
func noticeFor(m *transcript.Message) string {
	return "· " + tw.EngineLine(m, 140)
}

// AppendItems adds items at the end, measures them and follows the bottom
// when the list was there.
func (c *View) AppendItems(its ...*Item) {
	follow := c.following()
	start := len(c.Items)
	c.Items = append(c.Items, its...)
	for i := start; i < len(c.Items); i++ {
		c.setHeight(i)
	}
	c.List.Refresh()
	if follow {
		c.ToBottom()
	}
	c.Scrolled()
}

// Commit shows a committed message. An assistant reply replaces the
// streamed tail it completes; a tool result fills its call's card.
func (c *View) Commit(m *transcript.Message, logIndex int) {
	c.curIndex = logIndex
	defer func() { c.curIndex = -1 }()
	switch m.Role {
	case transcript.Assistant:
		n := len(c.Items)
		if n > 0 && c.Items[n-1].Streaming {
			c.Items = c.Items[:n-1]
			c.List.truncate(n - 1)
		}
		before := len(c.Items)
		c.addMessage(m)
		added := append([]*Item(nil), c.Items[before:]...)
		c.Items = c.Items[:before]
		c.AppendItems(added...)
	case transcript.Tool:
		if it := c.ByCall[m.ToolCallID]; it != nil {
			c.addMessage(m)
			c.RefreshItem(it)
			return
		}
		before := len(c.Items)
		c.addMessage(m)
		added := append([]*Item(nil), c.Items[before:]...)
		c.Items = c.Items[:before]
		c.AppendItems(added...)
	default:
		before := len(c.Items)
		c.addMessage(m)
		added := append([]*Item(nil), c.Items[before:]...)
		c.Items = c.Items[:before]
		c.AppendItems(added...)
		if m.Kind == transcript.KindDiagnostics {
			for _, it := range c.round {
				c.RefreshItem(it) // the cards now show their findings
			}
		}
		if m.Role == transcript.User && m.Kind == transcript.KindChat {
			c.ToBottom() // the user sent it: show it and what follows
		}
	}
}

// Delta adds streamed text to the unfinished assistant tail.
func (c *View) Delta(content, reasoning string) {
	c.Deltas++
	n := len(c.Items)
	if n == 0 || !c.Items[n-1].Streaming {
		c.AppendItems(&Item{Kind: ItemAssistant, Streaming: true, Text: content, Reasoning: reasoning})
		return
	}
	it := c.Items[n-1]
	it.Text += content
	it.Reasoning += reasoning
	c.RefreshItem(it)
}

// DropStreaming removes an unfinished tail that will never be committed.
func (c *View) DropStreaming() { c.EndStreaming(false) }

// EndStreaming ends an unfinished tail the engine did not commit: with
// keep (the user stopped the turn) it stays, shown as a stopped reply;
// without, it is removed.
func (c *View) EndStreaming(keep bool) {
	n := len(c.Items)
	if n == 0 || !c.Items[n-1].Streaming {
		return
	}
	it := c.Items[n-1]
	if keep && strings.TrimSpace(it.Text+it.Reasoning) != "" {
		it.Streaming, it.Stopped, it.Unsaved = false, true, true
		it.md = nil
		c.RefreshItem(it)
		return
	}
	c.Items = c.Items[:n-1]
	c.List.truncate(n - 1)
	c.List.Refresh()
}

// Notice adds a line from Tally itself (not part of the transcript).
func (c *View) Notice(text string, isErr bool) {
	c.AppendItems(&Item{Kind: ItemNotice, Text: text, isError: isErr})
}

// ToolStarted marks a call as running.
func (c *View) ToolStarted(id string) {
	if it := c.ByCall[id]; it != nil && !it.hasResult {
		it.Status = ToolRunning
		c.RefreshItem(it)
	}
}

// Index returns the position of it, searching from the end.
func (c *View) Index(it *Item) int {
	for i := len(c.Items) - 1; i >= 0; i-- {
		if c.Items[i] == it {
			return i
		}
	}
	return -1
}

// RefreshItem re-measures and redraws one item after the engine changed
// it; a change at the end of the chat keeps it at its bottom if it was.
func (c *View) RefreshItem(it *Item) {
	i := c.Index(it)
	if i < 0 {
		return
	}
	follow := i >= len(c.Items)-2 && c.following()
	c.redraw(i)
	if follow {
		c.ToBottom()
	}
}

// redraw re-measures and redraws row i where it is.
func (c *View) redraw(i int) {
	c.setHeight(i)
	c.List.RefreshItem(i)
	c.scrolledLater()
}

// ToggleResult opens or closes a tool card's result where it is.
func (c *View) ToggleResult(it *Item) {
	it.Expanded = !it.Expanded
	if i := c.Index(it); i >= 0 {
		c.redraw(i)
	}
}

// toggleDiagnostics opens or closes a tool card's list of findings where
// it is.
func (c *View) toggleDiagnostics(it *Item) {
	it.diagsOpen = !it.diagsOpen
	if i := c.Index(it); i >= 0 {
		c.redraw(i)
	}
}

// ToggleReasoning opens or closes a reply's reasoning where it is.
func (c *View) ToggleReasoning(it *Item) {
	it.ReasonOn = !it.ReasonOn
	if i := c.Index(it); i >= 0 {
		c.redraw(i)
	}
}
