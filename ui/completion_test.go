package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// docsServer serves the prompts "review" (pr required) and "summary", and
// the resources "mem://notes.md" and "mem://plan.md", over streamable
// HTTP.
func docsServer(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	say := func(text string) sdk.PromptHandler {
		return func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
		}
	}
	s.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a pull request.", Arguments: []*sdk.PromptArgument{
		{Name: "pr", Description: "the pull request number", Required: true}}}, say("Review it."))
	s.AddPrompt(&sdk.Prompt{Name: "summary", Description: "Summarise the day."}, say("Summarise the day."))
	for _, uri := range []string{"mem://notes.md", "mem://plan.md"} {
		s.AddResource(&sdk.Resource{URI: uri, Name: strings.TrimPrefix(uri, "mem://"), MIMEType: "text/markdown"},
			func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "text of " + req.Params.URI}}}, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// docsSession opens the window at w×h and a session whose MCP server
// "docs" is docsServer, connected.
func docsSession(t *testing.T, w, h float32) *harness {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := workbench.SaveMCPServer("docs", mcp.ServerConfig{URL: docsServer(t)}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("ok") }))
	t.Cleanup(srv.Close)
	hs := newHarness(t, endpoint(srv))
	hs.win.Resize(fyne.NewSize(w, h))
	hs.newSession()
	hs.waitFor("the MCP server", func() bool {
		st := hs.ui.live.sess.MCP().Status()
		return len(st.Servers) == 1 && st.Servers[0].State == mcp.StateConnected
	})
	return hs
}

// rowsShown returns the labels of the completion rows on screen.
func (h *harness) rowsShown() []string {
	c := h.ui.input.complete
	if !c.box.Visible() {
		return nil
	}
	var out []string
	for _, o := range c.rows.Objects {
		if r, ok := o.(*completionRow); ok {
			out = append(out, r.ch.label)
		}
	}
	return out
}

func key(h *harness, name fyne.KeyName) {
	h.ui.input.prompt.TypedKey(&fyne.KeyEvent{Name: name})
	h.q.drain()
}

func TestSlashListsCommandsAndPicksOne(t *testing.T) {
	h := docsSession(t, 1200, 800)
	p := h.ui.input.prompt
	test.Type(p, "/")
	h.waitFor("the commands", func() bool { return len(h.ui.input.complete.choices) == 7 })
	if got := strings.Join(h.rowsShown(), " | "); got != "/compact | /docs:review <pr> | /docs:summary | /help | /model [@profile] [name] | /new-cycle" {
		t.Fatalf("rows %q; want the built-in commands among the server's", got)
	}
	test.Type(p, "docs:")
	if got := strings.Join(h.rowsShown(), " | "); got != "/docs:review <pr> | /docs:summary" {
		t.Fatalf("rows %q", got)
	}
	if !h.shows("Review a pull request.") || !h.shows("Summarise the day.") {
		t.Error("the descriptions are not shown")
	}
	test.Type(p, "su")
	if got := h.rowsShown(); len(got) != 1 || got[0] != "/docs:summary" {
		t.Fatalf("filtered by \"su\": %v", got)
	}
	key(h, fyne.KeyBackspace)
	key(h, fyne.KeyBackspace)
	if len(h.rowsShown()) != 2 {
		t.Fatalf("after erasing the filter: %v", h.rowsShown())
	}
	key(h, fyne.KeyDown)
	key(h, fyne.KeyDown) // wraps around to the first
	key(h, fyne.KeyUp)   // and back to the last
	if c := h.ui.input.complete; c.sel != 1 {
		t.Fatalf("selection %d", c.sel)
	}
	key(h, fyne.KeyUp)
	key(h, fyne.KeyReturn)
	if p.Text != "/docs:review " || strings.Contains(p.Text, "\n") {
		t.Fatalf("picked: %q", p.Text)
	}
	if h.rowsShown() != nil {
		t.Errorf("the list stayed open: %v", h.rowsShown())
	}
	if !h.ui.input.complete.box.Visible() || !h.shows("usage: /docs:review <pr>") || !h.shows("pr: the pull request number") {
		t.Error("the command's usage is not shown while its arguments are typed")
	}
	test.Type(p, "42")
	if p.CursorColumn != len([]rune("/docs:review 42")) {
		t.Errorf("cursor at %d", p.CursorColumn)
	}
}

func TestEscapeClosesTheListAndPathsDoNotOpenIt(t *testing.T) {
	h := docsSession(t, 1200, 800)
	p := h.ui.input.prompt
	test.Type(p, "/do")
	h.waitFor("the commands", func() bool { return len(h.rowsShown()) == 2 })
	key(h, fyne.KeyEscape)
	if h.ui.input.complete.box.Visible() {
		t.Fatal("Escape left the list open")
	}
	test.Type(p, "c")
	if h.ui.input.complete.box.Visible() {
		t.Error("typing on reopened the list Escape closed")
	}
	p.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	key(h, fyne.KeyReturn) // a plain newline again
	p.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	if p.Text != "/doc\n" {
		t.Errorf("Shift+Enter with the list closed: %q", p.Text)
	}
	p.SetText("")
	test.Type(p, "/etc/hosts")
	h.q.drain()
	if h.ui.input.complete.box.Visible() {
		t.Errorf("a path opened the list: %v", h.rowsShown())
	}
}

func TestAtListsResourcesAndTabPicksOne(t *testing.T) {
	h := docsSession(t, 1200, 800)
	p := h.ui.input.prompt
	test.Type(p, "compare @")
	h.waitFor("the resources", func() bool { return len(h.rowsShown()) == 2 })
	if got := strings.Join(h.rowsShown(), " | "); got != "@docs:mem://notes.md | @docs:mem://plan.md" {
		t.Fatalf("rows %q", got)
	}
	test.Type(p, "pl")
	key(h, fyne.KeyTab)
	if p.Text != "compare @docs:mem://plan.md " {
		t.Fatalf("picked: %q", p.Text)
	}
	test.Type(p, "with @docs:mem://n")
	h.q.drain()
	if got := h.rowsShown(); len(got) != 1 || got[0] != "@docs:mem://notes.md" {
		t.Fatalf("second word: %v", got)
	}
	test.Tap(h.ui.input.complete.rows.Objects[0].(*completionRow))
	if p.Text != "compare @docs:mem://plan.md with @docs:mem://notes.md " {
		t.Fatalf("tapped: %q", p.Text)
	}
}

// A mistyped command is not sent: the banner says why and the prompt
// gets the text back.
func TestUnknownCommandComesBackToThePrompt(t *testing.T) {
	h := docsSession(t, 1200, 800)
	h.send("/docs:reveiw 42")
	h.waitIdle()
	if h.ui.input.prompt.Text != "/docs:reveiw 42" {
		t.Errorf("the prompt holds %q", h.ui.input.prompt.Text)
	}
	if b := h.ui.banner.Text(); !strings.Contains(b, "Not sent: there is no command /docs:reveiw") || !strings.Contains(b, "/docs:review") {
		t.Errorf("banner %q", b)
	}
}

// At 960×600 the list fits above the prompt box: every row is drawn whole
// inside the window, none over another or over the prompt box, and the
// prompt box keeps its height.
func TestCompletionListFitsASmallWindow(t *testing.T) {
	h := docsSession(t, 960, 600)
	promptBefore := h.ui.input.prompt.Size().Height
	test.Type(h.ui.input.prompt, "/")
	h.waitFor("the commands", func() bool { return len(h.ui.input.complete.choices) == 7 })
	// A server with many prompts, long names and descriptions.
	cc := h.ui.input.complete
	for i := range 20 {
		cc.cmds = append(cc.cmds, command.Command{Name: fmt.Sprintf("docs:generate_release_notes_for_component_%02d", i),
			Hint: "<component> [since] [until] [audience]", Description: strings.Repeat("Write the release notes of a component from its merged pull requests. ", 4)})
	}
	cc.changed()
	shown := len(h.rowsShown())
	if shown < minCompletionRows || shown > 4 || !h.shows(fmt.Sprintf("1–%d of 27 commands", shown)) {
		t.Errorf("at 960×600 the list shows %d rows (%q)", shown, h.rowsShown())
	}
	for range shown + 1 {
		key(h, fyne.KeyDown)
	}
	if cc.sel != shown+1 || cc.top != 2 || h.rowsShown()[shown-1] != cc.choices[cc.sel].label {
		t.Errorf("moving past the last row shown: selection %d, top %d, rows %q", cc.sel, cc.top, h.rowsShown())
	}
	c := h.win.Canvas()
	fynetest.LayoutAll(c.Content())
	at := drawn(c.Content())
	win := rect{0, 0, 960, 600}
	prompt := at[h.ui.input.prompt]
	if got := prompt.y1 - prompt.y0; got < promptBefore-0.5 {
		t.Errorf("the prompt box shrank from %v to %v", promptBefore, got)
	}
	box := at[h.ui.input.complete.box]
	if box.overlaps(prompt) || box.y1 > prompt.y0+0.5 {
		t.Errorf("the list %v is drawn over the prompt box %v", box, prompt)
	}
	var rows []rect
	for _, o := range h.ui.input.complete.rows.Objects {
		r := at[o]
		if r.empty() || r.x0 < win.x0 || r.y0 < win.y0 || r.x1 > win.x1 || r.y1 > win.y1 || r.x1 > box.x1+0.5 {
			t.Errorf("row %T at %v leaves the window or the list %v", o, r, box)
		}
		for _, q := range rows {
			if q.overlaps(r) {
				t.Errorf("rows %v and %v overlap", q, r)
			}
		}
		rows = append(rows, r)
	}
	fynetest.Walk(h.ui.input.complete.box, func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok && l.Text != "" {
			if r := at[o]; r.y1-r.y0 < l.MinSize().Height-0.5 {
				t.Errorf("the label %q is cut: %v", l.Text, r)
			}
		}
		if tx, ok := o.(*canvas.Text); ok && tx.Text != "" && at[o].empty() {
			t.Errorf("the text %q is not drawn", tx.Text)
		}
		return true
	})
	if chat := at[h.ui.chat.Box]; chat.y1-chat.y0 < 120 {
		t.Errorf("the chat keeps only %v px", chat.y1-chat.y0)
	}
}

// A session without MCP servers or command files lists the built-in
// commands only, and does not ask for the lists again and again while "/"
// is typed.
func TestNoCommandsNoListAndNoRepeatedAsking(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := silentSession(t)
	test.Type(h.ui.input.prompt, "/")
	h.waitFor("the lists to arrive", func() bool { return !h.ui.input.complete.loading })
	for range 20 {
		h.q.drain()
		time.Sleep(2 * time.Millisecond)
	}
	if c := h.ui.input.complete; c.loading || !h.q.empty() || len(c.choices) != len(command.Builtins()) {
		t.Errorf("loading %v, queue empty %v, %d choices", c.loading, h.q.empty(), len(c.choices))
	}
}
