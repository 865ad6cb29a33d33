package acp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// TestAdditionalDirectoriesAreFoldersOfTheSession: a session made with an
// additional directory sees it in its status block, writes there by
// absolute path, lists it, and can be resumed with another list or
// none; a relative directory is refused.
func TestAdditionalDirectoriesAreFoldersOfTheSession(t *testing.T) {
	extra, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(extra, "notes.md")
	var sawFolders bool
	f := newFixtureWith(t, llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() == 0 {
			for _, m := range req.Messages {
				sawFolders = sawFolders || strings.Contains(m.Content, "additional_folders: [\""+extra+"\"]")
			}
			return llmtest.Call("write_file", `{"path":"`+notes+`","content":"# Notes\n"}`)
		}
		return llmtest.Reply{Content: "Wrote the notes."}
	}))
	h := f.connect(t, tool.ModeAutoEdit)
	init, err := h.conn.Initialize(ctx(t), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	if err != nil || init.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		t.Errorf("initialize does not offer additional directories: %+v, %v", init.AgentCapabilities.SessionCapabilities, err)
	}

	if _, err := h.conn.NewSession(ctx(t), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{}, AdditionalDirectories: []string{"rel/dir"}}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("a relative additional directory: %v; want it refused", err)
	}
	if _, err := h.conn.NewSession(ctx(t), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{}, AdditionalDirectories: []string{filepath.Join(extra, "missing")}}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing additional directory: %v; want it refused, saying why", err)
	}
	sess, err := h.conn.NewSession(ctx(t), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{}, AdditionalDirectories: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	if resp := prompt(t, h, sess.SessionId, "Write notes.md in the docs folder."); resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "# Notes\n" {
		t.Fatalf("notes.md in the additional directory: %q, %v", b, err)
	}
	if !sawFolders {
		t.Error("the model was not told the additional folder in its status block")
	}
	list, err := h.conn.ListSessions(ctx(t), acp.ListSessionsRequest{Cwd: acp.Ptr(f.ws)})
	if err != nil || len(list.Sessions) != 1 || !slices.Equal(list.Sessions[0].AdditionalDirectories, []string{extra}) {
		t.Fatalf("session/list: %+v, %v; want the session with its additional directory", list.Sessions, err)
	}
	if _, err := h.conn.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: sess.SessionId, Cwd: f.ws}); err == nil || !strings.Contains(err.Error(), "other additional directories") {
		t.Errorf("resuming the open session without its directory: %v; want it refused", err)
	}
	h.close()

	// A later connection resumes it without the directory: it has none.
	h2 := f.connect(t, tool.ModeAutoEdit)
	if _, err := h2.conn.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: sess.SessionId, Cwd: f.ws}); err != nil {
		t.Fatal(err)
	}
	list, err = h2.conn.ListSessions(ctx(t), acp.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || len(list.Sessions[0].AdditionalDirectories) != 0 {
		t.Errorf("after a resume without directories: %+v, %v; want none", list.Sessions, err)
	}
}
