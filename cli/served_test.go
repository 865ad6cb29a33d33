package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/remote"
)

// listingSetup gives the user and a workspace a skill, hooks and an MCP
// server each, and the data an endpoint profile, all with the app closed;
// it returns the data directory and the workspace.
func listingSetup(t *testing.T) (data, ws string) {
	t.Helper()
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	data, ws = t.TempDir(), t.TempDir()
	files := map[string]string{
		filepath.Join(cfg, "tally", "skills", "pdf", "SKILL.md"):   "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nx",
		filepath.Join(ws, ".claude", "skills", "ship", "SKILL.md"): "---\nname: ship\ndescription: Ship a release.\n---\ny",
		filepath.Join(cfg, "tally", "hooks.json"):                  `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from the user hook"}]}]}}`,
		filepath.Join(ws, ".tally", "hooks.json"):                  `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch ran", "timeout": 5}]}]}}`,
		filepath.Join(ws, ".tally", "mcp.json"):                    `{"mcpServers": {"repo": {"command": "repo-server", "args": ["--stdio"]}}}`,
	}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"mcp", "add", "files", "--", "files-server", "/srv"},
		{"profile", "add", "local", "--base-url", "http://127.0.0.1:9/v1", "--model", "qwen", "--data", data},
	} {
		if _, errOut, code := runCLI(t, args...); code != ExitOK {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
	}
	return data, ws
}

// `tally mcp list`, `profile list`, `skills`, `hooks list` and `worktree
// diff` only read, but with the app open they were refused ("the Tally app
// has this data open"). They now run inside the app and print what they
// print with the app closed.
func TestListingsWhileTheAppIsOpen(t *testing.T) {
	data, ws := listingSetup(t)
	commands := [][]string{
		{"mcp", "list", "--workspace", ws},
		{"mcp", "list", "--json", "--workspace", ws},
		{"skills", "--workspace", ws},
		{"skills", "list", "--json", "--workspace", ws},
		{"hooks", "--workspace", ws},
		{"hooks", "list", "--json", "--workspace", ws},
		{"profile"},
		{"profile", "list", "--json"},
		{"profiles", "--json", "list"},
	}
	closed := make([]string, len(commands))
	for i, args := range commands {
		out, errOut, code := runCLI(t, append(args, "--data", data)...)
		if code != ExitOK || out == "" {
			t.Fatalf("%v with the app closed: exit %d, %s", args, code, errOut)
		}
		closed[i] = out
	}
	mustHave(t, closed[0], "files\tuser\tenabled\tfiles-server /srv", "repo\tworkspace\tnot trusted")
	mustHave(t, closed[2], "pdf\tuser\tFill in PDF forms.", "1 skill of the workspace wait")
	mustHave(t, closed[4], "echo from the user hook", "workspace (not trusted)\tPreToolUse")
	mustHave(t, closed[6], "local\thttp://127.0.0.1:9/v1\tqwen")

	openApp(t, data)
	for i, args := range commands {
		out, errOut, code := runCLI(t, append(args, "--data", data)...)
		if code != ExitOK || out != closed[i] {
			t.Errorf("%v with the app open: exit %d, stderr %q, out\n%s\nwant\n%s", args, code, errOut, out, closed[i])
		}
	}
	// Language servers never needed the store.
	if _, errOut, code := runCLI(t, "lsp", "status", "--workspace", ws); code != ExitOK {
		t.Errorf("lsp status with the app open: exit %d, %s", code, errOut)
	}
}

// A command the app runs for another process works in that process's
// folder: the workspace of `tally skills` without --workspace, and a
// relative --workspace, are the client's, not the app's.
func TestServedCommandsUseTheClientsFolder(t *testing.T) {
	data, ws := listingSetup(t)
	openApp(t, data)
	for _, req := range []remote.Request{
		{Args: []string{"skills", "--data", data}, Dir: ws},
		{Args: []string{"skills", "--workspace", filepath.Base(ws), "--data", data}, Dir: filepath.Dir(ws)},
		{Args: []string{"hooks", "--data", data}, Dir: ws},
		{Args: []string{"mcp", "list", "--data", data}, Dir: ws},
	} {
		var out, errb bytes.Buffer
		code, err := remote.Call(data, req, nil, &out, &errb)
		if err != nil || code != ExitOK {
			t.Fatalf("%v in %s: exit %d, %v, %s", req.Args, req.Dir, code, err, errb.String())
		}
		if !strings.Contains(out.String(), ws) && !strings.Contains(out.String(), "repo\tworkspace") {
			t.Errorf("%v in %s did not list the workspace's:\n%s", req.Args, req.Dir, out.String())
		}
	}
}

// The commands that change what the app holds are refused at once, each
// naming itself, and change nothing.
func TestWritesBesideTheAppAreRefused(t *testing.T) {
	data, ws := listingSetup(t)
	openApp(t, data)
	for _, args := range [][]string{
		{"mcp", "trust", "--workspace", ws},
		{"mcp", "untrust", "--workspace", ws},
		{"skills", "trust", "--workspace", ws},
		{"hooks", "trust", "--workspace", ws},
		{"profile", "add", "other", "--base-url", "http://127.0.0.1:9/v1"},
		{"profile", "default", "local"},
		{"search", "--reindex"},
		{"mcp", "call", "files", "echo"},
		{"mcp", "logout", "files"},
	} {
		_, errOut, code := runCLI(t, append(args, "--data", data)...)
		name := commandName(args)
		if code != ExitFail || !strings.HasPrefix(errOut, name+": the Tally app has this data open") || !strings.Contains(errOut, "close the app") {
			t.Errorf("%v with the app open: exit %d, stderr %q", args, code, errOut)
		}
	}
	if out, _, _ := runCLI(t, "skills", "--workspace", ws, "--data", data); !strings.Contains(out, "1 skill of the workspace wait") {
		t.Errorf("a refused trust trusted the skills:\n%s", out)
	}
	if out, _, _ := runCLI(t, "profile", "--data", data); strings.Contains(out, "other") || !strings.Contains(out, "new sessions start on: main") {
		t.Errorf("a refused profile command changed the profiles:\n%s", out)
	}
}

// Every command about one stored session that only reads prints, with
// the app open, what it prints with the app closed.
func TestSessionReadsWhileTheAppIsOpen(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), workspace(t)
	if _, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--session", "u", "--workspace", ws, "--yes", "turn one"); code != 0 {
		t.Fatalf("run exited %d: %s", code, errOut)
	}
	commands := [][]string{
		{"sessions"}, {"sessions", "--json"},
		{"inspect", "u"}, {"inspect", "--ledger", "u"},
		{"preview", "u"}, {"archive", "u"},
		{"export", "u"}, {"export", "u", "--format", "md"}, {"export", "u", "--format", "html"},
		{"changes", "u"}, {"changes", "u", "--turn", "1"},
		{"rewind", "u", "--to", "1"},
		{"search", "Add"}, {"search", "--json", "Add"},
	}
	closed := make([]string, len(commands))
	for i, args := range commands {
		out, errOut, code := runCLI(t, append(args, "--data", data)...)
		if code != ExitOK {
			t.Fatalf("%v with the app closed: exit %d, %s", args, code, errOut)
		}
		closed[i] = out
	}
	wb := openApp(t, data)
	// The window shows the session: reading it is still everyone's.
	shown, err := wb.OpenSession(mustConfig(t, wb, workbench.Flags{BaseURL: srv.URL(), Model: "deepseek-chat"}, "u"), "u")
	if err != nil {
		t.Fatal(err)
	}
	defer shown.Close()
	for i, args := range commands {
		out, errOut, code := runCLI(t, append(args, "--data", data)...)
		if code != ExitOK || out != closed[i] {
			t.Errorf("%v with the app open: exit %d, stderr %q, out\n%s\nwant\n%s", args, code, errOut, out, closed[i])
		}
	}
}

// A workbench the app lends to a command carries the command's
// environment: `tally inspect` with the app open resolves the model as
// the command's own environment says, not the app's.
func TestServedCommandsUseTheClientsEnvironment(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	data := t.TempDir()
	wb := openApp(t, data)
	s := newServed(wb, remote.Request{Env: []string{"TALLY_MODEL=from-the-client", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"}})
	got := s.borrow(commandHolder).Resolve(workbench.Flags{})
	if got.Model != "from-the-client" || got.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("the lent workbench resolved %q at %q; want the client's environment", got.Model, got.BaseURL)
	}
}

// `tally worktree diff` only reads: with the app open it runs inside the
// app; a merge is refused and leaves the checkout alone.
func TestWorktreeDiffWhileTheAppIsOpen(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("old line\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "first")
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("edit_file", `{"path":"notes.txt","old_string":"old line","new_string":"new line"}`),
		llmtest.Text("edited"),
	))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	data := t.TempDir()
	_, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", repo, "--worktree", "--yes", "edit the notes")
	m := regexp.MustCompile(`session (\S+)`).FindStringSubmatch(errOut)
	if code != ExitOK || m == nil {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	id := m[1]
	openApp(t, data)
	out, errOut, code := runCLI(t, "worktree", "diff", "--data", data, id)
	if code != ExitOK || !strings.Contains(out, "-old line") || !strings.Contains(out, "+new line") {
		t.Errorf("diff with the app open: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "worktree", "merge", "--data", data, id); code != ExitFail || !strings.HasPrefix(errOut, "tally worktree merge: the Tally app has this data open") {
		t.Errorf("merge with the app open: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(b) != "old line\n" {
		t.Errorf("a refused merge changed the checkout: %q", b)
	}
}

// `tally acp` could not open a session while the app was open: the store
// was the app's. An editor's tally acp now runs inside the app: the app
// opens the sessions and runs their turns, this process passes the
// protocol on. A session is never open in the window and the editor at
// once.
func TestACPRunsInsideTheOpenApp(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv := llmtest.New(benchTurn())
	defer srv.Close()
	data := t.TempDir()
	wb := openApp(t, data)
	flags := workbench.Flags{BaseURL: srv.URL(), Model: "deepseek-chat"}
	held, err := wb.CreateSession(mustConfig(t, wb, flags, ""), t.TempDir(), "the window's")
	if err != nil {
		t.Fatal(err)
	}
	heldID := held.Snapshot().Meta.ID

	srvIn, toSrv := io.Pipe()
	fromSrv, srvOut := io.Pipe()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		code := Main([]string{"acp", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--mode", "ask"}, srvIn, srvOut, &errb)
		srvOut.Close()
		done <- code
	}()
	conn := acp.NewClientSideConnection(allowingClient{}, toSrv, fromSrv)
	conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "NOTES.md"), []byte("# Notes\n\nlimit: 1\n"), 0o644)
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new with the app open: %v (stderr %q)", err, errb.String())
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(benchPrompt)}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("session/prompt with the app open: %v, %v", resp.StopReason, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "NOTES.md")); !strings.Contains(string(b), "limit: 2") {
		t.Errorf("the turn did not edit NOTES.md: %q", b)
	}
	id := string(sess.SessionId)
	if _, err := wb.Session(id); err != nil {
		t.Errorf("the app's store lacks the editor's session: %v", err)
	}
	// The window cannot open the editor's session, nor the editor the
	// window's.
	if _, err := wb.OpenSession(mustConfig(t, wb, flags, id), id); !errors.Is(err, workbench.ErrInUse) || !strings.Contains(err.Error(), "an editor connected with tally acp") {
		t.Errorf("the window opened the editor's session: %v", err)
	}
	if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(heldID), Cwd: ws, McpServers: []acp.McpServer{}}); err == nil || !strings.Contains(err.Error(), "open in the Tally app") {
		t.Errorf("the editor loaded the window's session: %v", err)
	}
	held.Close()
	if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(heldID), Cwd: ws, McpServers: []acp.McpServer{}}); err != nil {
		t.Errorf("the editor could not load a session the window closed: %v", err)
	}

	toSrv.Close() // the editor quits
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("tally acp exited %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tally acp did not end with its input")
	}
	again, err := wb.OpenSession(mustConfig(t, wb, flags, id), id)
	if err != nil {
		t.Fatalf("the window could not open the session the editor closed: %v", err)
	}
	again.Close()
}

// mustConfig is the configuration of session id ("" for a new one) on
// wb with flags.
func mustConfig(t *testing.T, wb *workbench.Workbench, flags workbench.Flags, id string) agent.Config {
	t.Helper()
	cfg, err := wb.Config(workbench.SessionOptions{ID: id, Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A tally acp started before the app, which had not opened the data yet
// when the app took it, cannot open a session: it says to restart the
// agent, which then runs inside the app.
func TestACPStartedBeforeTheAppSaysToRestart(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data := t.TempDir()
	srvIn, toSrv := io.Pipe()
	fromSrv, srvOut := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Main([]string{"acp", "--data", data, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"}, srvIn, srvOut, io.Discard)
		srvOut.Close()
		done <- code
	}()
	conn := acp.NewClientSideConnection(allowingClient{}, toSrv, fromSrv)
	conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	openApp(t, data)
	_, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "restart the agent in the editor") {
		t.Errorf("session/new after the app opened the data: %v", err)
	}
	toSrv.Close()
	<-done
}
