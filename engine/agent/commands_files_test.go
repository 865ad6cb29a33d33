package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/status"
)

// writeCommand writes a command file under dir, making its folders.
func writeCommand(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commandsHarness is a harness whose user folder and workspace hold
// command files: the user's review.md and deploy.md's rivals, the
// workspace's fix.md, deploy.md, explain.md and frontend/component.md.
func commandsHarness(t *testing.T) (*harness, string) {
	t.Helper()
	h := newHarness(t, llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("ok") }), nil)
	user := t.TempDir()
	h.cfg.UserConfigDir = user
	writeCommand(t, user, "commands/review.md", "---\n"+
		"description: Review a pull request: its tests first.\n"+
		"argument-hint: [pr] [focus]\n"+
		"allowed-tools: Bash(git diff:*), Read\n"+
		"model: claude-3-5-haiku-20241022\n"+
		"---\n"+
		"Review pull request $1, focusing on $2.\nAsked as: $ARGUMENTS\n"+
		"!`git diff HEAD`\nSee @docs/review.md for the checklist.\n")
	writeCommand(t, h.ws, ".tally/commands/review.md", "The workspace's review, hidden by the user's.\n")
	writeCommand(t, h.ws, ".claude/commands/review.md", "The .claude review, hidden too.\n")
	writeCommand(t, h.ws, ".tally/commands/fix.md", "# Fix\nFix the failing test and run it again.\n")
	writeCommand(t, h.ws, ".tally/commands/deploy.md", "---\ndescription: Deploy from .tally.\n---\nDeploy $ARGUMENTS from .tally.\n")
	writeCommand(t, h.ws, ".claude/commands/deploy.md", "---\ndescription: Deploy from .claude.\n---\nDeploy $ARGUMENTS from .claude.\n")
	writeCommand(t, h.ws, ".claude/commands/explain.md", "---\ndescription: Explain code\nargument-hint: [file]\n---\nExplain $ARGUMENTS to a newcomer.\n")
	writeCommand(t, h.ws, ".claude/commands/frontend/component.md", "---\ndescription: Make a component.\n---\nWrite the component $1 with the prop $2; $3 is empty.\n")
	writeCommand(t, h.ws, ".tally/commands/notes.txt", "not a command")
	return h, user
}

func TestCommandFilesExpandIntoTheRequest(t *testing.T) {
	h, _ := commandsHarness(t)
	s := h.session("cmd-files")
	defer s.Close()
	ctx := context.Background()
	for _, tc := range []struct{ typed, want string }{
		{`/review 42 "error paths" now`, "Review pull request 42, focusing on error paths.\nAsked as: 42 \"error paths\" now\n" +
			"!`git diff HEAD`\nSee @docs/review.md for the checklist."},
		{"/fix the parser", "# Fix\nFix the failing test and run it again.\n\nthe parser"},
		{"/fix", "# Fix\nFix the failing test and run it again."},
		{"/explain engine/agent/commands.go", "Explain engine/agent/commands.go to a newcomer."},
		{"/deploy staging", "Deploy staging from .tally."},
		{`/frontend:component Button 'primary color'`, "Write the component Button with the prop primary color;  is empty."},
	} {
		if _, err := s.Run(ctx, tc.typed); err != nil {
			t.Fatalf("%s: %v", tc.typed, err)
		}
		got := lastHuman(t, h)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.typed) {
			t.Errorf("%s was sent as:\n%s\nwant it to hold:\n%s", tc.typed, got, tc.want)
		}
	}
	h.noInvalid()
	if title := s.Snapshot().Meta.Title; !strings.HasPrefix(title, "/review 42") {
		t.Errorf("title %q; want the command as typed", title)
	}
	if n := len(h.srv.Requests()); n != 6 {
		t.Errorf("%d requests; want one per command", n)
	}
}

func TestCommandFilesListPrecedenceAndNamespaces(t *testing.T) {
	h, _ := commandsHarness(t)
	s := h.session("cmd-list")
	defer s.Close()
	byName := map[string]command.Command{}
	for _, c := range s.Commands().List(context.Background()) {
		if _, dup := byName[c.Name]; dup {
			t.Errorf("/%s is listed twice", c.Name)
		}
		byName[c.Name] = c
	}
	for name, want := range map[string]command.Command{
		"review":             {Source: command.SourceUser, Description: "Review a pull request: its tests first.", Hint: "[pr] [focus]"},
		"deploy":             {Source: command.SourceWorkspace, File: ".tally/commands/deploy.md", Description: "Deploy from .tally."},
		"explain":            {Source: command.SourceWorkspace, File: ".claude/commands/explain.md", Description: "Explain code", Hint: "[file]"},
		"fix":                {Source: command.SourceWorkspace, File: ".tally/commands/fix.md", Description: "Fix"},
		"frontend:component": {Source: command.SourceWorkspace, File: ".claude/commands/frontend/component.md", Description: "Make a component."},
		"compact":            {Source: command.SourceBuiltin, Action: command.ActionCompact},
		"help":               {Source: command.SourceBuiltin, Action: command.ActionHelp},
		"new-cycle":          {Source: command.SourceBuiltin, Action: command.ActionNewCycle},
		"rewind":             {Source: command.SourceBuiltin, Action: command.ActionRewind, Hint: "[turn]"},
		"model":              {Source: command.SourceBuiltin, Action: command.ActionModel, Hint: "[@profile] [name]"},
	} {
		c, ok := byName[name]
		if !ok {
			t.Errorf("/%s is not listed", name)
			continue
		}
		if c.Source != want.Source || c.Action != want.Action || c.Hint != want.Hint || c.Problem != "" ||
			(want.File != "" && c.File != want.File) || (want.Description != "" && c.Description != want.Description) {
			t.Errorf("/%s: %+v", name, c)
		}
	}
	if c := byName["review"]; !strings.HasSuffix(c.File, "/commands/review.md") || c.Usage() != "/review [pr] [focus]" {
		t.Errorf("the user's review: file %q, usage %q", c.File, c.Usage())
	}
	if len(byName) != 10 {
		t.Errorf("%d commands listed: %v", len(byName), byName)
	}
	if notes := s.Commands().Notes(); len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	// A mistyped name in a namespace that has command files is reported;
	// another first word with a colon is text.
	_, err := s.Run(context.Background(), "/frontend:compnent Button")
	var ce *command.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "there is no command /frontend:compnent; the nearest are /frontend:component") {
		t.Errorf("a mistyped command: %v", err)
	}
	if _, err := s.Run(context.Background(), "/10:30 standup notes"); err != nil {
		t.Fatal(err)
	}
	if got := lastHuman(t, h); !strings.Contains(got, "\n/10:30 standup notes\n") {
		t.Errorf("sent as %q", got)
	}
}

// A file that cannot be used gives one note and a command that says why;
// the others still work.
func TestBrokenCommandFileIsNotedAndTheRestWork(t *testing.T) {
	h, user := commandsHarness(t)
	writeCommand(t, h.ws, ".tally/commands/broken.md", "---\ndescription: never closed\n\nThe body.\n")
	writeCommand(t, h.ws, ".tally/commands/wrong.md", "---\ndescription:\n  nested: map\n---\nBody.\n")
	writeCommand(t, h.ws, ".tally/commands/big.md", strings.Repeat("x", command.MaxFileBytes+1))
	writeCommand(t, h.ws, ".tally/commands/compact.md", "Not the built-in.\n")
	writeCommand(t, h.ws, ".tally/commands/my file.md", "A space in the name.\n")
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("outside the workspace"), 0o644)
	if err := os.Symlink(outside, filepath.Join(h.ws, ".tally/commands/escape.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.Symlink(filepath.Join(user, "commands/review.md"), filepath.Join(h.ws, ".claude/commands/linked.md"))
	s := h.session("cmd-broken")
	defer s.Close()
	notes := s.Commands().Notes()
	for _, want := range []string{
		".tally/commands/broken.md: its header opens with --- but never closes; end it with a --- line",
		".tally/commands/wrong.md: its header has a field of the wrong kind",
		".tally/commands/big.md: it is over 64 KB; shorten it",
		".tally/commands/compact.md is hidden by the built-in command /compact; rename it to use it",
		".tally/commands/my file.md is not read:",
		".tally/commands/escape.md: it is a link that leads outside its commands folder",
		".claude/commands/linked.md: it is a link that leads outside its commands folder",
	} {
		found := 0
		for _, n := range notes {
			if strings.Contains(n, want) {
				found++
			}
			if strings.Count(n, "; ") > 2 || strings.Contains(n, "\n") {
				t.Errorf("a note is not one sentence: %q", n)
			}
		}
		if found != 1 {
			t.Errorf("%d notes hold %q: %q", found, want, notes)
		}
	}
	var broken command.Command
	for _, c := range s.Commands().List(context.Background()) {
		if c.Name == "broken" {
			broken = c
		}
	}
	if !strings.Contains(broken.Problem, "never closes") {
		t.Errorf("broken is listed as %+v", broken)
	}
	ctx := context.Background()
	for msg, want := range map[string]string{
		"/broken":      "the command /broken (.tally/commands/broken.md) cannot be used: its header opens with --- but never closes; end it with a --- line",
		"/big":         "cannot be used: it is over 64 KB",
		"/escape":      "cannot be used: it is a link that leads outside its commands folder",
		"/compact now": "/compact is a command of the app",
		"/compact":     "/compact is a command of the app, not a message for the model; in the app type it in the prompt box; on the command line run tally compact SESSION",
	} {
		_, err := s.Run(ctx, msg)
		var ce *command.Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want a command.Error with %q", msg, err, want)
		}
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
	if _, err := s.Run(ctx, "/deploy prod"); err != nil {
		t.Fatal(err)
	}
	if got := lastHuman(t, h); !strings.Contains(got, "Deploy prod from .tally.") || strings.Contains(got, "outside the workspace") {
		t.Errorf("the working command was sent as %q", got)
	}
}

// Using a command changes nothing before the message it expands into:
// the second request repeats the first one's bytes.
func TestCommandLeavesTheRequestPrefixAlone(t *testing.T) {
	h, _ := commandsHarness(t)
	h.cfg.StatusMode = status.OnChange // the app's placement: each request extends the last
	s := h.session("cmd-prefix")
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Run(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "/review 7 tests"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	type body struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	var r1, r2 body
	if json.Unmarshal(reqs[0].Body, &r1) != nil || json.Unmarshal(reqs[1].Body, &r2) != nil {
		t.Fatal("the requests are not JSON")
	}
	if a, b := mustJSON(t, r1.Tools), mustJSON(t, r2.Tools); a != b {
		t.Error("the tools changed")
	}
	if len(r1.Messages) < 2 || len(r2.Messages) <= len(r1.Messages) {
		t.Fatalf("%d then %d messages", len(r1.Messages), len(r2.Messages))
	}
	for i := range r1.Messages {
		if string(r1.Messages[i]) != string(r2.Messages[i]) {
			t.Errorf("message %d changed:\n%s\n%s", i, r1.Messages[i], r2.Messages[i])
		}
	}
	if !strings.Contains(lastHuman(t, h), "Review pull request 7, focusing on tests.") {
		t.Errorf("the command was sent as %q", lastHuman(t, h))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseActionAndHelp(t *testing.T) {
	for msg, want := range map[string]command.Invocation{
		"/compact":        {Command: command.Command{Name: "compact"}},
		"  /rewind 3  ":   {Command: command.Command{Name: "rewind"}, Args: "3", Turn: 3},
		"/rewind":         {Command: command.Command{Name: "rewind"}},
		"/model gpt-5.1 ": {Command: command.Command{Name: "model"}, Args: "gpt-5.1", Model: "gpt-5.1"},
		"/model @local q": {Command: command.Command{Name: "model"}, Args: "@local q", Profile: "local", Model: "q"},
		"/model @main":    {Command: command.Command{Name: "model"}, Args: "@main", Profile: "main"},
		"/new-cycle":      {Command: command.Command{Name: "new-cycle"}},
		"/help":           {Command: command.Command{Name: "help"}},
	} {
		inv, ok, err := command.ParseAction(msg)
		if !ok || err != nil || inv.Command.Name != want.Command.Name || inv.Args != want.Args || inv.Turn != want.Turn || inv.Profile != want.Profile || inv.Model != want.Model || inv.Command.Action == "" {
			t.Errorf("%q: %+v %v %v", msg, inv, ok, err)
		}
	}
	for _, msg := range []string{"/compacted", "compact", "/etc/hosts", "/", "", "/review 42"} {
		if _, ok, err := command.ParseAction(msg); ok || err != nil {
			t.Errorf("%q is taken for a built-in command (%v)", msg, err)
		}
	}
	for msg, want := range map[string]string{
		"/rewind last":  `/rewind takes the number of a turn, such as /rewind 3, not "last"`,
		"/rewind 0":     "/rewind takes the number of a turn",
		"/help me":      `/help takes no arguments but got "me"; send /help alone`,
		"/model a b":    "/model takes one model name",
		"/model @ a":    "/model @ needs a profile's name",
		"/new-cycle go": "/new-cycle takes no arguments",
	} {
		_, ok, err := command.ParseAction(msg)
		var ce *command.Error
		if !ok || !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v %v; want %q", msg, ok, err, want)
		}
	}
	h, user := commandsHarness(t)
	cmds, notes := command.List(user, h.ws)
	if len(cmds) != 10 || len(notes) != 0 {
		t.Fatalf("command.List: %d commands, notes %q", len(cmds), notes)
	}
	help := command.HelpText(cmds, []string{".tally/commands/help.md is hidden by the built-in command /help; rename it to use it"})
	for _, want := range []string{
		"Built-in commands:\n  /compact — Compact the conversation now",
		"  /rewind [turn] — Go back",
		"Your commands and the MCP servers' prompts:\n",
		"  /deploy — Deploy from .tally. (.tally/commands/deploy.md)",
		"  /frontend:component — Make a component. (.claude/commands/frontend/component.md)",
		"Left out:\n  .tally/commands/help.md is hidden by the built-in command /help",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(command.HelpText(command.Builtins(), nil), "Your commands") {
		t.Error("help without command files lists some")
	}
}
