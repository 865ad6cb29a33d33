package ui

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
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// itemKind is what a chat row shows.
type itemKind int

const (
	itemUser itemKind = iota
	itemAssistant
	itemTool
	itemNotice
	itemRebuild // a compaction or a new cycle, with its summary or brief
	itemCycle   // an earlier, closed cycle: collapsed, expands to its messages
	itemRewind  // a rewind of the conversation: collapsed, expands to the messages it took out
)

// chatItem is one row of the chat. Items are only touched on the UI
// goroutine.
type chatItem struct {
	kind      itemKind
	text      string
	reasoning string
	streaming bool // an assistant reply still arriving: plain text
	// stopped marks a reply the user stopped; unsaved, one the engine
	// did not keep (it is only shown, the model never sees it).
	stopped, unsaved bool
	md               *tw.Doc // a finished reply's Markdown, while parsed (see doc)
	reasonOn         bool
	isError          bool // notices: an error
	// detailName names the expandable text of a rebuild row ("Summary");
	// the text itself is kept in reasoning.
	detailName string
	// past holds an earlier cycle's messages (itemCycle); pastItems are
	// their rows once expanded (reasonOn says whether they are shown), or
	// the rows a rewind took out (itemRewind).
	past      []transcript.Message
	pastItems []*chatItem
	// superseded marks a row a rewind took out of the conversation: it is
	// drawn greyed.
	superseded bool
	cycleNo    int            // the closed cycle an itemCycle row stands for
	child      *subagent.Info // the sub-agent running a task call, once it started
	// logIndex is a user message's index in the current cycle's log, -1
	// for messages outside it (earlier cycles, superseded ones). A
	// rewrite of the log moves it, so a rewind finds its turn by sent
	// and sha (the time and body hash of the message) instead.
	logIndex int
	sent     time.Time
	sha      string
	images   []transcript.ImageRef // the pictures the message carries, shown as thumbnails

	call      transcript.ToolCall
	title     string
	argsText  string
	status    string
	result    string
	resultLen int // a tool result's length; the messages a rewind took out
	resultErr bool
	hasResult bool
	expanded  bool
	approval  *pendingApproval
	decided   string
	redacted  int // secrets replaced in the result at intake
	// diags are the findings about this call's file from its round's
	// <diagnostics> message; diagsOpen shows their list.
	diags     []lsp.Diagnostic
	diagsOpen bool

	measuredAt float32 // width of the last exact measurement; 0: estimated
}

func (it *chatItem) longResult() bool {
	return len(it.result) > 1200 || strings.Count(it.result, "\n") > 14
}

// copyText is what the Copy button puts on the clipboard.
func (it *chatItem) copyText() string {
	switch it.kind {
	case itemTool:
		s := it.title + "\n" + it.argsText
		if it.hasResult {
			s += "\n\n" + it.result
		}
		return s
	}
	return it.text
}

// chatView is the conversation: a virtualized list whose rows are measured
// at the list's real width whenever their content or the width changes.
type chatView struct {
	// filled, when set, is called whenever a row comes into view and is
	// filled (see UI.memoryReleaser).
	filled   func()
	list     *chatList
	box      *fyne.Container
	est      map[itemKind]float32 // one-line height of each kind at width
	estW     float32
	lineH    float32
	charW    float32
	items    []*chatItem
	byCall   map[string]*chatItem
	width    float32
	measurer *messageRow
	later    func(func()) // runs a function on the UI goroutine after this one
	// stickBottom is set while a freshly loaded list should end up at its
	// bottom whatever the first layout does.
	stickBottom bool
	autoOffset  float32           // the offset of the last automatic scroll to the bottom
	jump        *widget.Button    // "Jump to latest", shown while the end is out of view
	jumpLayer   fyne.CanvasObject // holds jump over the list's bottom right corner
	checking    bool              // a check of the jump button is queued
	toEnd       bool              // a scroll to the bottom is queued
	endShown    bool              // the end of the chat was in view at the last check

	awaitNext *chatItem      // the last rewrite's row, until the next request's size is known
	found     *chatItem      // the row a search result last scrolled to
	rewound   map[string]int // files each rewind of this window restored, by rewindKey
	curIndex  int            // the log index addMessage gives user rows, -1 outside the log
	onRewind  func(it *chatItem)
	onChild   [2]func(it *chatItem) // a sub-agent card's Transcript and Stop
	onCommand func(it *chatItem)    // a command card's "Always allow this command"

	// round holds the tool cards of the last model message that made
	// calls, which its <diagnostics> message is spread over.
	round []*chatItem

	onDecide func(it *chatItem, d tool.Decision)
	thumbs   thumbs // the pictures' thumbnails (see chat_images.go)
	docs     docRing
	copy     func(string)
	deltas   int // streamed updates shown, for tests and diagnostics
}

func newChatView(later func(func()), onDecide func(*chatItem, tool.Decision), copyFn func(string)) *chatView {
	c := &chatView{byCall: map[string]*chatItem{}, later: later, onDecide: onDecide, copy: copyFn, curIndex: -1}
	c.measurer = newMessageRow(c)
	c.list = c.newList()
	c.list.onKey = func(ev *fyne.KeyEvent) { c.key(ev) } // the window adds its keys (installShortcuts)
	c.newJump()
	c.box = container.New(&tw.WidthWatcher{OnWidth: c.widthChanged, OnHeight: c.heightChanged}, c.list, c.jumpLayer)
	return c
}

// newList makes the chat's list. A row that comes into view gets the
// height it needs at the list's width there and then (see fitShown).
func (c *chatView) newList() *chatList {
	return newChatList(
		func() int { return len(c.items) },
		func() fyne.CanvasObject { return newMessageRow(c) },
		func(id int, o fyne.CanvasObject) {
			if id < len(c.items) {
				r := o.(*messageRow)
				r.set(c.items[id])
				c.fitShown(id, r)
				c.scrolledLater() // a scroll shows new rows
				if c.filled != nil {
					c.filled()
				}
			}
		})
}

// setMessages replaces the conversation with msgs.
func (c *chatView) setMessages(msgs []transcript.Message) {
	c.items = c.items[:0]
	c.list.truncate(0)
	c.thumbs.forget()
	c.byCall = map[string]*chatItem{}
	c.awaitNext = nil
	c.round = nil
	for i := range msgs {
		c.curIndex = i
		c.addMessage(&msgs[i])
	}
	c.curIndex = -1
	c.rebuild(false)
}

// setHistory shows a reopened conversation whole: for each earlier rewrite
// of the log, the messages it removed and a row saying what happened; then
// the messages the log holds now.
func (c *chatView) setHistory(cycles []cycle.Archive, past []agent.PastRebuild, msgs []transcript.Message) {
	c.items = c.items[:0]
	c.list.truncate(0)
	c.thumbs.forget()
	c.byCall = map[string]*chatItem{}
	c.awaitNext = nil
	c.round = nil
	for _, a := range cycles {
		c.items = append(c.items, cycleItem(a))
	}
	c.items = append(c.items, c.historyItems(past, msgs)...)
	c.rebuild(false)
}

// clear empties the chat.
func (c *chatView) clear() { c.setMessages(nil) }

// addMessage turns a committed message into items (no measuring).
func (c *chatView) addMessage(m *transcript.Message) {
	switch {
	case m.Role == transcript.User && m.Kind == transcript.KindChat:
		c.round = nil
		c.items = append(c.items, &chatItem{kind: itemUser, text: m.Body(), logIndex: c.curIndex, sent: m.Time, sha: bodyHash(m.Body()), images: m.Images()})
	case m.Role == transcript.User && m.Kind == transcript.KindDiagnostics:
		// The whole message stays, collapsed; its findings go on the
		// round's cards.
		c.items = append(c.items, &chatItem{kind: itemNotice, text: noticeFor(m), reasoning: m.Body(), detailName: "Diagnostics"})
		spreadDiagnostics(c.round, parseDiagnostics(m.Body()))
	case m.Role == transcript.User:
		c.items = append(c.items, &chatItem{kind: itemNotice, text: noticeFor(m), images: m.Images()})
	case m.Role == transcript.Assistant:
		if strings.TrimSpace(m.Text()) != "" || m.Reasoning != "" {
			it := &chatItem{kind: itemAssistant, text: m.Text(), reasoning: m.Reasoning}
			if t, ok := strings.CutSuffix(strings.TrimRight(it.text, " \n"), stoppedNote); ok {
				it.text, it.stopped = strings.TrimRight(t, " \n"), true
			}
			c.items = append(c.items, it)
		}
		if len(m.ToolCalls) > 0 {
			c.round = nil
		}
		for _, call := range m.ToolCalls {
			it := &chatItem{kind: itemTool, call: call, status: toolQueued,
				title: tool.Summarize(call.Name, json.RawMessage(call.Arguments)), argsText: argsDisplay(call.Name, call.Arguments)}
			c.items = append(c.items, it)
			c.byCall[call.ID] = it
			c.round = append(c.round, it)
		}
	case m.Role == transcript.Tool:
		it := c.byCall[m.ToolCallID]
		if it == nil {
			call := transcript.ToolCall{ID: m.ToolCallID, Name: m.ToolName}
			it = &chatItem{kind: itemTool, call: call, title: m.ToolName}
			c.items = append(c.items, it)
			c.byCall[m.ToolCallID] = it
		}
		text := m.Text()
		it.result, it.resultLen, it.resultErr, it.hasResult = tw.ClipForDisplay(text), len([]rune(text)), m.IsError, true
		it.redacted = m.Redacted
		it.status = statusOfResult(text, m.IsError)
	}
}

func statusOfResult(text string, isErr bool) string {
	if !isErr {
		return toolOK
	}
	t := strings.ToLower(strings.TrimSpace(text))
	switch {
	case strings.HasPrefix(t, "denied") || strings.Contains(t, "user denied"):
		return toolDenied
	case strings.HasPrefix(t, "cancelled") || strings.HasPrefix(t, "interrupted"):
		return toolStopped
	}
	return toolFailed
}

// noticeFor describes an engine-injected message in one line.
func noticeFor(m *transcript.Message) string {
	return "· " + engineLine(m, 140)
}

// engineLabels name what the engine adds to the conversation, for people:
// the one place the chat, the archive and the previews take them from.
var engineLabels = map[transcript.Kind]string{
	transcript.KindSeed:        "new cycle seeded (the model starts from this)",
	transcript.KindReminder:    "reminder the engine added for the model",
	transcript.KindStatus:      "status the engine sent to the model",
	transcript.KindDiagnostics: "diagnostics after a file write",
	transcript.KindAck:         "acknowledgement the engine added",
	transcript.KindRepair:      "result the engine added for an interrupted call",
	transcript.KindAttachment:  "images a tool returned, shown to the model",
}

// engineLine is an engine-added message as "label: first line", with the
// engine's tags (<system-reminder>…) taken off, cut to n runes.
func engineLine(m *transcript.Message, n int) string {
	label := engineLabels[m.Kind]
	if label == "" {
		label = string(m.Kind)
	}
	return label + ": " + text.FirstLine(stripEngineTags(m.Body()), n)
}

// isTagStart reports whether c can start a tag name.
func isTagStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// stripEngineTags removes the opening and closing tags the engine wraps
// its messages in, such as <system-reminder> and <agent_status>.
func stripEngineTags(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, "<") {
		end := strings.Index(s, ">")
		if end < 2 || strings.Contains(s[1:end], "\n") || !isTagStart(s[1]) {
			break
		}
		s = strings.TrimSpace(s[end+1:])
	}
	for strings.HasSuffix(s, ">") {
		start := strings.LastIndex(s, "</")
		if start < 0 || strings.ContainsAny(s[start:], " \n") {
			break
		}
		s = strings.TrimSpace(s[:start])
	}
	return s
}

// appendItems adds items at the end, measures them and follows the bottom
// when the list was there.
func (c *chatView) appendItems(its ...*chatItem) {
	follow := c.following()
	start := len(c.items)
	c.items = append(c.items, its...)
	for i := start; i < len(c.items); i++ {
		c.setHeight(i)
	}
	c.list.Refresh()
	if follow {
		c.toBottom()
	}
	c.scrolled()
}

// commit shows a committed message. An assistant reply replaces the
// streamed tail it completes; a tool result fills its call's card.
func (c *chatView) commit(m *transcript.Message, logIndex int) {
	c.curIndex = logIndex
	defer func() { c.curIndex = -1 }()
	switch m.Role {
	case transcript.Assistant:
		n := len(c.items)
		if n > 0 && c.items[n-1].streaming {
			c.items = c.items[:n-1]
			c.list.truncate(n - 1)
		}
		before := len(c.items)
		c.addMessage(m)
		added := append([]*chatItem(nil), c.items[before:]...)
		c.items = c.items[:before]
		c.appendItems(added...)
	case transcript.Tool:
		if it := c.byCall[m.ToolCallID]; it != nil {
			c.addMessage(m)
			c.refreshItem(it)
			return
		}
		before := len(c.items)
		c.addMessage(m)
		added := append([]*chatItem(nil), c.items[before:]...)
		c.items = c.items[:before]
		c.appendItems(added...)
	default:
		before := len(c.items)
		c.addMessage(m)
		added := append([]*chatItem(nil), c.items[before:]...)
		c.items = c.items[:before]
		c.appendItems(added...)
		if m.Kind == transcript.KindDiagnostics {
			for _, it := range c.round {
				c.refreshItem(it) // the cards now show their findings
			}
		}
		if m.Role == transcript.User && m.Kind == transcript.KindChat {
			c.toBottom() // the user sent it: show it and what follows
		}
	}
}

// delta adds streamed text to the unfinished assistant tail.
func (c *chatView) delta(content, reasoning string) {
	c.deltas++
	n := len(c.items)
	if n == 0 || !c.items[n-1].streaming {
		c.appendItems(&chatItem{kind: itemAssistant, streaming: true, text: content, reasoning: reasoning})
		return
	}
	it := c.items[n-1]
	it.text += content
	it.reasoning += reasoning
	c.refreshItem(it)
}

// dropStreaming removes an unfinished tail that will never be committed.
func (c *chatView) dropStreaming() { c.endStreaming(false) }

// stoppedNote ends a reply the engine kept after the user stopped it.
const stoppedNote = "(stopped by the user)"

// endStreaming ends an unfinished tail the engine did not commit: with
// keep (the user stopped the turn) it stays, shown as a stopped reply;
// without, it is removed.
func (c *chatView) endStreaming(keep bool) {
	n := len(c.items)
	if n == 0 || !c.items[n-1].streaming {
		return
	}
	it := c.items[n-1]
	if keep && strings.TrimSpace(it.text+it.reasoning) != "" {
		it.streaming, it.stopped, it.unsaved = false, true, true
		it.md = nil
		c.refreshItem(it)
		return
	}
	c.items = c.items[:n-1]
	c.list.truncate(n - 1)
	c.list.Refresh()
}

// notice adds a line from Tally itself (not part of the transcript).
func (c *chatView) notice(text string, isErr bool) {
	c.appendItems(&chatItem{kind: itemNotice, text: text, isError: isErr})
}

// toolStarted marks a call as running.
func (c *chatView) toolStarted(id string) {
	if it := c.byCall[id]; it != nil && !it.hasResult {
		it.status = toolRunning
		c.refreshItem(it)
	}
}

// index returns the position of it, searching from the end.
func (c *chatView) index(it *chatItem) int {
	for i := len(c.items) - 1; i >= 0; i-- {
		if c.items[i] == it {
			return i
		}
	}
	return -1
}

// refreshItem re-measures and redraws one item after the engine changed
// it; a change at the end of the chat keeps it at its bottom if it was.
func (c *chatView) refreshItem(it *chatItem) {
	i := c.index(it)
	if i < 0 {
		return
	}
	follow := i >= len(c.items)-2 && c.following()
	c.redraw(i)
	if follow {
		c.toBottom()
	}
}

// redraw re-measures and redraws row i where it is.
func (c *chatView) redraw(i int) {
	c.setHeight(i)
	c.list.RefreshItem(i)
	c.scrolledLater()
}

// toggleResult opens or closes a tool card's result where it is.
func (c *chatView) toggleResult(it *chatItem) {
	it.expanded = !it.expanded
	if i := c.index(it); i >= 0 {
		c.redraw(i)
	}
}

// toggleDiagnostics opens or closes a tool card's list of findings where
// it is.
func (c *chatView) toggleDiagnostics(it *chatItem) {
	it.diagsOpen = !it.diagsOpen
	if i := c.index(it); i >= 0 {
		c.redraw(i)
	}
}

// toggleReasoning opens or closes a reply's reasoning where it is.
func (c *chatView) toggleReasoning(it *chatItem) {
	it.reasonOn = !it.reasonOn
	if i := c.index(it); i >= 0 {
		c.redraw(i)
	}
}
