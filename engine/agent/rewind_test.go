package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// untouchedFiles is the size of the tree a rewind must leave alone.
const untouchedFiles = 1000

// rewindScript makes the agent, in turn "one": edit two files, create one,
// delete one with rm and rename one with mv; in turn "two": edit a file
// again; and answer any other turn with text only.
func rewindScript() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("Done.")
		}
		human := req.LastHuman()
		switch {
		case strings.Contains(human, "turn one"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`},
				{Name: "write_file", Arguments: `{"path":"src/b.txt","content":"bee, rewritten\n"}`},
				{Name: "write_file", Arguments: `{"path":"src/new.txt","content":"brand new\n"}`},
				{Name: "run_shell", Arguments: `{"command":"rm gone.txt"}`},
				{Name: "run_shell", Arguments: `{"command":"mv old.txt renamed.txt"}`},
			}}
		case strings.Contains(human, "turn two"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"ALPHA","new_string":"ALPHA, again"}`},
			}}
		}
		return llmtest.Text("Fine.")
	})
}

// seedTree fills ws with the files the script works on and a tree of
// untouchedFiles files it never touches.
func seedTree(t *testing.T, ws string) {
	t.Helper()
	files := map[string]string{"src/b.txt": "bee\n", "gone.txt": "to be removed\n", "old.txt": "to be renamed\n"}
	for i := range untouchedFiles {
		files[fmt.Sprintf("tree/d%02d/f%04d.txt", i%37, i)] = fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", i%200))
	}
	for p, body := range files {
		abs := filepath.Join(ws, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeHashes returns the SHA-256 of every file under ws but .git.
func treeHashes(t *testing.T, ws string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(ws, p)
			out[filepath.ToSlash(rel)] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestRewindRestoresFilesAndConversation(t *testing.T) {
	for _, c := range []struct {
		name          string
		repo, prepare bool
	}{{"plain folder", false, false}, {"git repository", true, false}, {"plain folder, snapshot prepared when the turn starts", false, true}} {
		repo := c.repo
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, rewindScript(), tool.ApproveAll{})
			h.cfg.PrepareSnapshots = c.prepare
			seedTree(t, h.ws)
			var gitBefore string
			if repo {
				if _, err := exec.LookPath("git"); err != nil {
					t.Skip("git is not installed")
				}
				git(t, h.ws, "init", "-q")
				git(t, h.ws, "add", "-A")
				git(t, h.ws, "commit", "-q", "-m", "start")
				gitBefore = git(t, h.ws, "status", "--porcelain") + git(t, h.ws, "rev-parse", "HEAD") + git(t, h.ws, "stash", "list")
			}
			before := treeHashes(t, h.ws)
			s := h.session("rw")
			ctx := context.Background()
			for _, text := range []string{"turn one", "turn two"} {
				if _, err := s.Run(ctx, text); err != nil {
					t.Fatal(err)
				}
			}
			h.noInvalid()
			if _, err := os.Stat(filepath.Join(h.ws, "renamed.txt")); err != nil {
				t.Fatalf("the script did not run: %v", err)
			}
			turns := s.Snapshot().Turns()
			if len(turns) != 2 || turns[0].N != 1 || turns[1].N != 2 || turns[0].LogIndex != 0 || turns[1].LogIndex <= 0 {
				t.Fatalf("turns %+v", turns)
			}
			if vt := s.Snapshot().Turns(); len(vt) != 2 || vt[1].LogIndex != turns[1].LogIndex {
				t.Errorf("the snapshot's turns %+v", vt)
			}
			changes, err := s.Files().Changes()
			if err != nil {
				t.Fatal(err)
			}
			var changed []string
			for _, c := range changes {
				changed = append(changed, c.Path)
			}
			if got, want := strings.Join(changed, " "), "a.txt gone.txt old.txt renamed.txt src/b.txt src/new.txt"; got != want {
				t.Errorf("changes %q; want %q", got, want)
			}

			plan, err := s.Rewind().Plan(1)
			if err != nil || plan.FilesErr != "" || plan.ChatErr != "" {
				t.Fatalf("plan %+v, %v", plan, err)
			}
			if len(plan.Superseded) != len(s.Snapshot().Messages()) {
				t.Errorf("plan supersedes %d messages; want all %d", len(plan.Superseded), len(s.Snapshot().Messages()))
			}
			res, err := s.Rewind().Apply(ctx, 1, true, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "turn one" || res.Superseded == 0 {
				t.Errorf("result %+v", res)
			}
			after := treeHashes(t, h.ws)
			if len(after) != len(before) {
				t.Errorf("%d files after the rewind; %d before", len(after), len(before))
			}
			for p, sum := range before {
				if after[p] != sum {
					t.Errorf("%s differs after the rewind", p)
				}
			}
			if repo {
				if got := git(t, h.ws, "status", "--porcelain") + git(t, h.ws, "rev-parse", "HEAD") + git(t, h.ws, "stash", "list"); got != gitBefore {
					t.Errorf("git state changed:\n%s\nwas\n%s", got, gitBefore)
				}
			}
			if n := len(s.Snapshot().Messages()); n != 0 {
				t.Errorf("%d messages left after rewinding to the first turn", n)
			}
			// The next request is valid for the strict server, and the
			// superseded messages are kept.
			if _, err := s.Run(ctx, "hello again"); err != nil {
				t.Fatal(err)
			}
			h.noInvalid()
			hist, err := s.Compaction().History()
			if err != nil || len(hist) == 0 || hist[len(hist)-1].Record.Reason != "rewind to turn 1" {
				t.Fatalf("history %+v, %v", hist, err)
			}
			found := false
			for _, m := range hist[len(hist)-1].Superseded {
				found = found || (m.IsPlainUserText() && m.Body() == "turn two")
			}
			if !found {
				t.Error("the superseded messages are not kept")
			}
			if turns := s.Snapshot().Turns(); len(turns) != 3 || turns[2].N != 3 || !turns[0].Superseded || turns[2].LogIndex != 0 {
				t.Errorf("turns after the rewind %+v", turns)
			}
		})
	}
}

func TestRewindRefusesAFileEditedByTheUser(t *testing.T) {
	h := newHarness(t, rewindScript(), tool.ApproveAll{})
	seedTree(t, h.ws)
	s := h.session("rw")
	ctx := context.Background()
	if _, err := s.Run(ctx, "turn one"); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(h.ws, "src", "b.txt")
	os.WriteFile(mine, []byte("my own edit\n"), 0o644)
	plan, err := s.Rewind().Plan(1)
	if err != nil || strings.Join(plan.Conflicts(), ",") != "src/b.txt" {
		t.Fatalf("conflicts %v, %v", plan.Conflicts(), err)
	}
	n := len(s.Snapshot().Messages())
	_, err = s.Rewind().Apply(ctx, 1, true, true, false)
	if !errors.Is(err, filehistory.ErrConflict) {
		t.Fatalf("rewind without force: %v", err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "my own edit\n" {
		t.Errorf("the user's edit was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "a.txt")); string(b) != "ALPHA\n" || len(s.Snapshot().Messages()) != n {
		t.Errorf("a refused rewind changed something: a.txt %q, %d messages", b, len(s.Snapshot().Messages()))
	}
	if _, err := s.Rewind().Apply(ctx, 1, true, false, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "bee\n" {
		t.Errorf("forced rewind left %q", b)
	}
	if len(s.Snapshot().Messages()) != n {
		t.Error("a files-only rewind changed the conversation")
	}
}

func TestChatOnlyRewindKeepsFilesAndChecklist(t *testing.T) {
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("Done.")
		}
		if strings.Contains(req.LastHuman(), "plan") {
			return llmtest.Call("todo_write", `{"items":[{"content":"first step"}]}`)
		}
		return llmtest.Call("write_file", `{"path":"x.txt","content":"x\n"}`)
	})
	h := newHarness(t, script, tool.ApproveAll{})
	s := h.session("chat")
	ctx := context.Background()
	for _, text := range []string{"write x", "plan it"} {
		if _, err := s.Run(ctx, text); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Snapshot().Checklist) == 0 {
		t.Fatal("the script did not write the checklist")
	}
	if _, err := s.Rewind().Apply(ctx, 2, false, true, false); err != nil {
		t.Fatal(err)
	}
	if len(s.Snapshot().Checklist) != 0 {
		t.Errorf("checklist after rewinding to before it was written: %+v", s.Snapshot().Checklist)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "x.txt")); err != nil {
		t.Error("a chat-only rewind removed a file")
	}
	msgs := s.Snapshot().Messages()
	if last := msgs[len(msgs)-1]; last.Role != transcript.Assistant {
		t.Errorf("the log ends with %s", last.Role)
	}
	if _, err := s.Run(ctx, "go on"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	// Reopened, the session numbers its next turn after the rewound ones.
	again, err := Open(h.cfg, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if turns := again.Snapshot().Turns(); len(turns) != 3 || turns[1].LogIndex != -1 || turns[2].N != 3 {
		t.Errorf("reopened turns %+v", turns)
	}
}

func TestCheckpointsNeverStoreSecretFiles(t *testing.T) {
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("Done.")
		}
		return llmtest.Call("run_shell", `{"command":"rm .env keys.txt"}`)
	})
	h := newHarness(t, script, tool.ApproveAll{})
	envMark, keyMark := "Zq9secretValueNeverStored1", "Zq9privateKeyBodyNeverStored2"
	os.WriteFile(filepath.Join(h.ws, ".env"), []byte("TOKEN="+envMark+"\n"), 0o600)
	os.WriteFile(filepath.Join(h.ws, "keys.txt"), []byte("-----BEGIN RSA PRIVATE KEY-----\n"+keyMark+"\n-----END RSA PRIVATE KEY-----\n"), 0o600)
	s := h.session("sec")
	if _, err := s.Run(context.Background(), "clean up"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.ws, ".env")); !os.IsNotExist(err) {
		t.Fatal("the script did not run")
	}
	h.st.Close()
	data, err := os.ReadFile(h.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{envMark, keyMark} {
		if strings.Contains(string(data), m) {
			t.Errorf("%s is in the store file", m)
		}
	}
}
