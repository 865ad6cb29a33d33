package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/chat"
	"github.com/tally-dev/tally/ui/compaction"
	"github.com/tally-dev/tally/ui/rewind"
)

// typeCommand types text into the prompt box and presses Send.
func typeCommand(h *harness, text string) {
	h.t.Helper()
	test.Type(h.ui.input.prompt, text)
	test.Tap(h.ui.input.send)
	h.q.drain()
}

// The list after "/" holds the user's and the workspace's command files
// and the built-in commands; picking a file command and sending it sends
// its text.
func TestSlashListsCommandFilesAndBuiltins(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	os.MkdirAll(filepath.Join(cfg, "tally", "commands"), 0o755)
	writeFile(t, filepath.Join(cfg, "tally", "commands"), "standup.md",
		"---\ndescription: Write my standup notes.\nargument-hint: [team]\n---\nWrite the standup notes of team $1.\n")
	var sent []string
	srv := llmtest.New(llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		sent = append(sent, req.LastHuman())
		return llmtest.Text("ok")
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	os.MkdirAll(filepath.Join(ws, ".claude", "commands", "frontend"), 0o755)
	writeFile(t, filepath.Join(ws, ".claude", "commands", "frontend"), "component.md", "Write the component $ARGUMENTS.\n")

	p := h.ui.input.prompt
	test.Type(p, "/")
	h.waitFor("the commands", func() bool { return len(h.ui.input.complete.choices) == 7 })
	var labels, details []string
	for _, ch := range h.ui.input.complete.choices {
		labels, details = append(labels, ch.label), append(details, ch.detail)
	}
	if got := strings.Join(labels, " | "); got != "/compact | /frontend:component | /help | /model [@profile] [name] | /new-cycle | /rewind [turn] | /standup [team]" {
		t.Fatalf("choices %q", got)
	}
	if d := details[6]; d != "Write my standup notes. · ~/.config/tally/commands/standup.md" && !strings.HasSuffix(d, "/tally/commands/standup.md") {
		t.Errorf("the user's command reads %q", d)
	}
	if d := details[0]; !strings.HasSuffix(d, " · built-in") {
		t.Errorf("/compact reads %q", d)
	}
	if !strings.Contains(details[1], ".claude/commands/frontend/component.md") {
		t.Errorf("the workspace's command reads %q", details[1])
	}
	test.Type(p, "sta")
	if got := h.rowsShown(); len(got) != 1 || got[0] != "/standup [team]" {
		t.Fatalf("filtered by \"sta\": %v", got)
	}
	key(h, fyne.KeyTab)
	if p.Text != "/standup " || !h.shows("usage: /standup [team] · Write my standup notes.") {
		t.Fatalf("picked %q; the usage is not shown", p.Text)
	}
	test.Type(p, "platform")
	test.Tap(h.ui.input.send)
	h.waitIdle()
	if len(sent) != 1 || !strings.Contains(sent[0], "Write the standup notes of team platform.") || strings.Contains(sent[0], "/standup") {
		t.Errorf("the model got %q", sent)
	}
}

// /compact in the prompt box opens the compaction preview, as the
// Compact button does, and Apply compacts; nothing is sent.
func TestCompactCommandRunsTheCompaction(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	plan, msgs := samplePlan()
	f := &fakeOps{plan: plan, msgs: msgs}
	h := fakeSession(t, f)
	chatBefore := len(h.ui.chat.Items)
	typeCommand(h, "/compact")
	waitShown[*compaction.Preview](h, "the preview")
	if h.ui.input.prompt.Text != "" {
		t.Errorf("the prompt keeps %q", h.ui.input.prompt.Text)
	}
	h.tapInDialog("Apply")
	h.waitFor("the compaction", func() bool { n, _ := f.counts(); return !h.ui.live.job.running && n == 1 })
	for _, it := range h.ui.chat.Items[chatBefore:] {
		if it.Kind == chat.ItemUser {
			t.Errorf("the command was sent as a message: %q", it.Text)
		}
	}
}

// The other built-in commands: /new-cycle asks first, /help lists the
// commands in the chat, /model NAME switches the model, /rewind
// opens the Rewind dialog of the last turn, and wrong arguments stay in
// the prompt.
func TestBuiltinCommandsInThePromptBox(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	srv := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("ok") }))
	t.Cleanup(srv.Close)
	h := newHarness(t, endpoint(srv))
	h.newSession()

	typeCommand(h, "/rewind")
	h.waitFor("the banner", func() bool {
		return strings.Contains(h.ui.banner.Text(), "Cannot rewind: this session has no turn yet; send a message first")
	})
	h.send("hello")
	h.waitIdle()

	typeCommand(h, "/compact now")
	if b := h.ui.banner.Text(); !strings.Contains(b, `Not run: /compact takes no arguments but got "now"`) || h.ui.input.prompt.Text != "/compact now" {
		t.Errorf("banner %q, prompt %q", b, h.ui.input.prompt.Text)
	}
	h.ui.input.prompt.SetText("")

	typeCommand(h, "/new-cycle")
	h.waitFor("the confirmation", func() bool { return h.overlayShows("Archive this cycle and start a new one?") })
	h.win.Canvas().Overlays().Top().Hide()
	h.win.Canvas().Overlays().Remove(h.win.Canvas().Overlays().Top())

	typeCommand(h, "/help")
	h.waitFor("the help", func() bool { return h.shows("Built-in commands:") })
	if !h.shows("/rewind [turn] — Go back to the start of a turn") {
		t.Error("the help does not list /rewind")
	}

	typeCommand(h, "/model other-model")
	h.waitFor("the switch", func() bool {
		return strings.Contains(h.ui.banner.Text(), "This session now talks to other-model; its next request starts that model's cache afresh")
	})

	typeCommand(h, "/rewind")
	waitShown[*rewind.Dialog](h, "the Rewind dialog")
	if !h.overlayShows("Go back to the start of turn 1: “hello") {
		t.Error("the dialog does not rewind to the last turn")
	}
	for _, it := range h.ui.chat.Items {
		if it.Kind == chat.ItemUser && strings.HasPrefix(it.Text, "/") {
			t.Errorf("a command was sent as a message: %q", it.Text)
		}
	}
}
