package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// tally run --add-dir gives the session a further folder: the model
// writes there by absolute path, tally changes lists the file by that
// path, tally rewind puts it back, and the next run keeps the folder
// unless --add-dir names others.
func TestRunAddDirIsAFolderOfTheSession(t *testing.T) {
	extra, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(extra, "NOTES.md")
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"`+notes+`","content":"# Notes\n"}`),
		llmtest.Text("done"),
		llmtest.Call("read_file", `{"path":"`+notes+`"}`),
		llmtest.Text("read"),
		llmtest.Call("run_shell", `{"command":"echo still here > ran.txt"}`),
		llmtest.Text("ran"),
	))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), workspace(t)
	base := []string{"run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--workspace", ws, "--session", "docs", "--yes"}

	if _, errOut, code := runCLI(t, append(base, "--add-dir", "/no/such/folder", "write")...); code == ExitOK || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("a missing folder: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, append(base, "--add-dir", extra, "write the notes")...); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "# Notes\n" {
		t.Fatalf("NOTES.md in the added folder: %q, %v", b, err)
	}
	out, errOut, code := runCLI(t, "changes", "--data", data, "docs")
	if code != ExitOK || !strings.Contains(out, filepath.ToSlash(notes)) {
		t.Errorf("tally changes does not list %s (exit %d):\n%s%s", notes, code, out, errOut)
	}

	// The next run keeps the folder: reading there still works.
	if _, errOut, code := runCLI(t, append(base, "read the notes")...); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, _, _ = runCLI(t, "export", "--data", data, "docs")
	if strings.Contains(out, "outside the workspace") {
		t.Errorf("the second run lost the folder:\n%s", out)
	}

	if _, errOut, code := runCLI(t, "rewind", "--data", data, "docs", "--to", "1", "--files-only", "--yes"); code != ExitOK {
		t.Fatalf("rewind exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(notes); err == nil {
		t.Error("the rewind left NOTES.md in the added folder")
	}

	// A folder deleted since is dropped when the session opens again: its
	// commands still run.
	if err := os.RemoveAll(extra); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, append(base, "run a command")...); code != ExitOK {
		t.Fatalf("with the folder gone: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err != nil {
		t.Errorf("the command did not run once the folder was gone: %v", err)
	}
	if _, err := os.Stat(extra); err == nil {
		t.Error("opening the session made the deleted folder again")
	}
}
