package rewind

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/tool"
)

// A session's additional folders are checkpointed beside its workspace:
// the changes the tools make there, by edit and by command, are listed
// with their absolute paths and undone by a rewind and a revert.
func TestAdditionalFoldersAreCheckpointedAndRestored(t *testing.T) {
	st := openStore(t)
	ws, extra := t.TempDir(), t.TempDir()
	extra, _ = filepath.EvalSymlinks(extra)
	os.WriteFile(filepath.Join(ws, "main.txt"), []byte("main\n"), 0o644)
	os.WriteFile(filepath.Join(extra, "lib.txt"), []byte("lib\n"), 0o644)
	r := Open(Options{Store: st, ID: "s", Workspace: ws, Roots: []string{extra}, Cycle: 1, Limits: Limits(0, nil)})
	env := &tool.Env{Workspace: ws, Roots: []string{extra}, Recorder: r.Record()}
	defer r.Close()
	run := func(tl tool.Tool, args map[string]string) {
		t.Helper()
		raw, _ := json.Marshal(args)
		if res := tl.Run(context.Background(), env, raw); res.IsError {
			t.Fatalf("%s: %s", tl.Spec().Name, res.Content)
		}
	}

	r.BeginTurn(1)
	lib := filepath.ToSlash(filepath.Join(extra, "lib.txt"))
	run(tool.EditFile(), map[string]string{"path": lib, "old_string": "lib", "new_string": "LIB"})
	run(tool.WriteFile(), map[string]string{"path": "main.txt", "content": "MAIN\n"})
	r.BeginTurn(2)
	run(tool.WriteFile(), map[string]string{"path": filepath.Join(extra, "new.txt"), "content": "new\n"})

	changes, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	newTxt := filepath.ToSlash(filepath.Join(extra, "new.txt"))
	if got, want := strings.Join(paths, " "), "main.txt "+lib+" "+newTxt; got != want {
		t.Fatalf("changes %s; want %s", got, want)
	}
	if c := changes[1]; c.Diff.Path != lib || !strings.Contains(c.Diff.Unified(), "+LIB") {
		t.Errorf("the additional folder's diff: %s", c.Diff.Unified())
	}

	res, err := r.RestoreFiles(2, false)
	if err != nil || len(res.Restored) != 1 || res.Restored[0] != newTxt {
		t.Fatalf("rewind to turn 2: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(extra, "new.txt")); err == nil {
		t.Error("the file created in the additional folder in turn 2 is still there")
	}
	if res, err = r.Revert(lib, false); err != nil || len(res.Restored) != 1 {
		t.Fatalf("revert %s: %+v, %v", lib, res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(extra, "lib.txt")); string(b) != "lib\n" {
		t.Errorf("lib.txt after the revert: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.txt")); string(b) != "MAIN\n" {
		t.Errorf("reverting a file of the additional folder changed the workspace's: %q", b)
	}

	// A command's changes in the additional folder are recorded too.
	r.BeginTurn(3)
	raw, _ := json.Marshal(map[string]string{"command": "echo cmd > " + filepath.Join(extra, "cmd.txt")})
	out := tool.RunShell().Run(context.Background(), env, raw)
	cmd := filepath.ToSlash(filepath.Join(extra, "cmd.txt"))
	if len(out.Paths) != 1 || out.Paths[0] != cmd {
		t.Fatalf("the command's changed paths %v; want %s (%s)", out.Paths, cmd, out.Content)
	}
	if res, err = r.RevertAll(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(extra, "cmd.txt")); err == nil {
		t.Error("revert all left the command's file in the additional folder")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.txt")); string(b) != "main\n" {
		t.Errorf("revert all left main.txt as %q", b)
	}
}
