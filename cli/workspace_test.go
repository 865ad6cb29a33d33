package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/storage"
)

// `tally run` started in ~ used the home folder as the workspace: the
// shell read ~/.ssh/id_rsa and the data file and appended to ~/.bashrc. A
// workspace that is the home folder or a parent of it, or that is or
// contains the data directory, is refused with one sentence saying what
// to do, before any request; so is a stored session whose workspace is
// the home folder.
func TestWorkspaceAtHomeIsRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("run_shell", `{"command":"cat ~/.ssh/id_rsa >> ~/.bashrc"}`), llmtest.Text("done")))
	defer srv.Close()
	project := filepath.Join(home, "src", "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	run := func(ws, data string, extra ...string) (string, int) {
		args := append([]string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--yes", "--workspace", ws}, extra...)
		_, stderr, code := runCLI(t, append(args, "hello")...)
		return stderr, code
	}
	for name, ws := range map[string]string{"home": home, "parent of home": filepath.Dir(home), "root": "/", "home via ..": filepath.Join(project, "..", "..")} {
		stderr, code := run(ws, data)
		if code != ExitFail || !strings.Contains(stderr, "pass a project folder") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("workspace %s (%s): exit %d, stderr %q; want one sentence refusing it", name, ws, code, stderr)
		}
	}
	// The data directory, or a folder holding it.
	for _, ws := range []string{project, filepath.Join(project, "..")} {
		stderr, code := run(ws, filepath.Join(project, "tally-data"))
		if code != ExitFail || !strings.Contains(stderr, "data directory") {
			t.Errorf("workspace %s holding the data: exit %d, stderr %q", ws, code, stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model from a refused workspace", n)
	}
	// A project folder works.
	if stderr, code := run(project, data, "--session", "ok-1"); code != ExitOK {
		t.Fatalf("a project folder was refused: exit %d, %s", code, stderr)
	}
	// A session stored with the home folder as its workspace (by an older
	// Tally) runs no turn.
	st, err := storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := st.Session("ok-1")
	if err != nil {
		t.Fatal(err)
	}
	meta.Workspace = home
	if err := st.PutSession(meta); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before := len(srv.Requests())
	stderr, code := run(project, data, "--session", "ok-1")
	if code != ExitFail || !strings.Contains(stderr, "pass a project folder") {
		t.Errorf("a stored session in the home folder: exit %d, stderr %q", code, stderr)
	}
	if len(srv.Requests()) != before {
		t.Error("the stored session in the home folder made a request")
	}
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Error("~/.bashrc was written")
	}
}
