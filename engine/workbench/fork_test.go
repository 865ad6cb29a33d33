package workbench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// forkScript writes notes.txt with the state the human names ("state-2"),
// puts that state on the checklist and then answers: one file change and
// one checklist per turn.
var forkScript = llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
	i := len(req.Messages) - 1
	for i > 0 && !(req.Messages[i].Role == "user" && strings.Contains(req.Messages[i].Content, "Set state-")) {
		i--
	}
	state := regexp.MustCompile(`Set (state-\d+)`).FindStringSubmatch(req.Messages[i].Content)[1]
	results := 0
	for _, m := range req.Messages[i:] {
		if m.Role == "tool" {
			results++
		}
	}
	switch results {
	case 0:
		return llmtest.Call("write_file", `{"path":"notes.txt","content":"`+state+`\n"}`)
	case 1:
		return llmtest.Call("checklist_write", `{"items":[{"content":"`+state+`","status":"in_progress"}]}`)
	}
	return llmtest.Text("Wrote notes.txt.")
})

// gitRepo makes a git repository with one commit of notes.txt.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "first"}} {
		if args[0] == "add" {
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("state-0\n"), 0o644)
		}
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// forkBench is a workbench talking to srv, with a parent session "p" in
// a git repository that ran turns 1 to 3 (notes.txt: state-1 … state-3).
func forkBench(t *testing.T, srv *llmtest.Server) (*Workbench, string) {
	t.Helper()
	w := bench(t, nil)
	if err := w.SaveSettings(Settings{BaseURL: srv.URL(), Model: "deepseek-chat", APIKey: "k"}); err != nil {
		t.Fatal(err)
	}
	ws := gitRepo(t)
	sess, err := agent.Create(forkConfig(t, w, ""), "p", ws, "parent")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, text := range []string{"Set state-1.", "Set state-2.", "Set state-3."} {
		if _, err := sess.Run(context.Background(), text); err != nil {
			t.Fatal(err)
		}
	}
	return w, ws
}

func forkConfig(t *testing.T, w *Workbench, id string) agent.Config {
	t.Helper()
	cfg, err := w.Config(SessionOptions{ID: id, Approver: tool.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	return cfg
}

// TestAForkHitsTheParentsCachedPrefixAndHasTheFilesOfItsTurn: a session
// ran three turns, each writing notes.txt; a fork at turn 2 in its own
// worktree holds notes.txt as turn 2 left it, and its first request starts
// with the very bytes of the parent's request after turn 2 (the system
// prompt, the tool catalogue and turns 1 and 2), so the scripted
// provider's cache serves at least what it served the parent there.
// It holds under both of the scripted server's cache rules: the longest
// common prefix, and DeepSeek's persisted prefix units.
func TestAForkHitsTheParentsCachedPrefixAndHasTheFilesOfItsTurn(t *testing.T) {
	for name, rule := range map[string]llmtest.CacheRule{"prefix": llmtest.CacheLCP, "units": llmtest.CacheUnits} {
		t.Run(name, func(t *testing.T) { forkHitsTheCache(t, rule) })
	}
}

func forkHitsTheCache(t *testing.T, rule llmtest.CacheRule) {
	srv := llmtest.New(forkScript, llmtest.WithTemplate(llmtest.TemplateDeepSeekV4), llmtest.WithCacheRule(rule))
	defer srv.Close()
	w, ws := forkBench(t, srv)
	parentReqs := srv.Requests()
	// Three requests a turn: the parent's first request of turn 3 is the
	// one that carried turns 1 and 2 whole.
	turn3 := parentReqs[6]
	if !strings.Contains(turn3.Messages[len(turn3.Messages)-1].Content, "state-3") {
		t.Fatalf("request 5 is not turn 3's first: %q", turn3.Messages[len(turn3.Messages)-1].Content)
	}

	f, err := w.ForkSession(context.Background(), "p", ForkOptions{Turn: 2, Worktree: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.Session.ForkOf != "p" || f.Session.ForkTurn != 2 || f.Tree.Path == "" || f.Session.Workspace != f.Tree.Path {
		t.Fatalf("the fork's header: %+v, tree %+v", f.Session, f.Tree)
	}
	if got, _ := os.ReadFile(filepath.Join(f.Tree.Path, "notes.txt")); string(got) != "state-2\n" {
		t.Errorf("the worktree's notes.txt is %q; want turn 2's state-2", got)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(got) != "state-3\n" {
		t.Errorf("the parent's notes.txt is %q; the fork must not touch it", got)
	}

	sess, err := agent.Open(forkConfig(t, w, f.Session.ID), f.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if n := len(sess.Snapshot().Turns()); n != 2 {
		t.Errorf("the fork has %d turns; want turns 1 and 2", n)
	}
	if list := sess.Snapshot().Checklist; len(list) != 1 || list[0].Content != "state-2" {
		t.Errorf("the fork's checklist is %+v; want turn 2's", list)
	}
	if _, err := sess.Run(context.Background(), "Set state-9."); err != nil {
		t.Fatal(err)
	}
	all := srv.Requests()
	first := all[len(parentReqs)]
	// Same system prompt, same catalogue, and turns 1–2 byte for byte.
	shared := 0
	for shared < len(first.Messages) && shared < len(turn3.Messages) && first.Messages[shared].Content == turn3.Messages[shared].Content {
		shared++
	}
	if !slicesEqual(first.Tools, turn3.Tools) {
		t.Errorf("the fork's tool catalogue differs from the parent's:\n%v\n%v", first.Tools, turn3.Tools)
	}
	if shared < 5 { // system, turn 1 (user, call, result, answer)…
		t.Errorf("the fork's first request shares only %d messages with the parent's turn 3", shared)
	}
	if !bytes.HasPrefix([]byte(first.Rendered), []byte(turn3.Rendered[:strings.Index(turn3.Rendered, "Set state-3.")-200])) {
		t.Error("the fork's rendered prompt does not start with the parent's up to turn 3")
	}
	if first.Hit == 0 || first.Hit < turn3.Hit || first.Hit < first.Prompt/2 {
		t.Errorf("the fork's first request hit %d of %d prompt tokens; the parent's turn 3 hit %d", first.Hit, first.Prompt, turn3.Hit)
	}
	t.Logf("fork's first request: %d of %d prompt tokens from the cache (parent's turn 3: %d of %d)", first.Hit, first.Prompt, turn3.Hit, turn3.Prompt)
	if got, _ := os.ReadFile(filepath.Join(f.Tree.Path, "notes.txt")); string(got) != "state-9\n" {
		t.Errorf("the fork wrote %q into its worktree", got)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(got) != "state-3\n" {
		t.Errorf("the fork's turn changed the parent's notes.txt to %q", got)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestAForkSharesTheFolderByDefaultAndListsItsLineage: without a
// worktree the fork works in the parent's folder and no file is
// touched; the list says where it comes from; a turn that does not exist
// is refused in one sentence.
func TestAForkSharesTheFolderByDefaultAndListsItsLineage(t *testing.T) {
	srv := llmtest.New(forkScript)
	defer srv.Close()
	w, ws := forkBench(t, srv)
	f, err := w.ForkSession(context.Background(), "p", ForkOptions{Turn: 1, Title: "try another way"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Session.Workspace != ws || f.Tree.Path != "" {
		t.Errorf("the fork works in %s (tree %+v); want the parent's %s", f.Session.Workspace, f.Tree, ws)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(got) != "state-3\n" {
		t.Errorf("notes.txt is %q; a fork in the same folder touches no file", got)
	}
	parentLog, err := w.SessionSummaries()
	if err != nil {
		t.Fatal(err)
	}
	perTurn := 0
	for _, s := range parentLog {
		if s.ID == "p" {
			perTurn = s.Messages / 3
		}
	}
	if f.Messages != perTurn {
		t.Errorf("the fork copied %d messages; want turn 1's %d", f.Messages, perTurn)
	}
	list, err := w.SessionSummaries()
	if err != nil {
		t.Fatal(err)
	}
	infos, err := w.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, s := range list {
		if s.ID == f.Session.ID {
			line = Lineage(s.SessionInfo, infos)
		}
	}
	if line != "forked from parent at turn 1" {
		t.Errorf("the list's lineage is %q", line)
	}
	if _, err := w.ForkSession(context.Background(), "p", ForkOptions{Turn: 7}); err == nil || !strings.Contains(err.Error(), "has no turn 7; its turns are 1 to 3") {
		t.Errorf("forking turn 7 of 3: %v", err)
	}
	if _, err := w.ForkSession(context.Background(), "nope", ForkOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("forking a missing session: %v", err)
	}
	// The last turn by default, whose end is the log's end.
	last, err := w.ForkSession(context.Background(), "p", ForkOptions{})
	if err != nil || last.Turn != 3 || last.Messages != 3*perTurn {
		t.Errorf("a fork of the last turn: %+v, %v", last, err)
	}
}
