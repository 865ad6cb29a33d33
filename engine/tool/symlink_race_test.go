//go:build unix

package tool

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// raceSetup builds base/ws (the workspace) and base/out (outside it) and
// returns the workspace, its Env, the outside directory and the secret
// planted there.
func raceSetup(t *testing.T) (ws string, env *Env, out, secret string) {
	t.Helper()
	base := t.TempDir()
	ws, out = filepath.Join(base, "ws"), filepath.Join(base, "out")
	secret = "TOP-SECRET-" + strings.Repeat("x", 8) + "-needle"
	for _, d := range []string{ws, filepath.Join(ws, "d"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(out, "secret.txt"): secret + "\n",
		filepath.Join(out, "f.txt"):      secret + " harmless\n",
		filepath.Join(ws, "f.txt"):       "harmless needle\n",
		filepath.Join(ws, "d", "f.txt"):  "harmless needle\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(out, "secret.txt"), filepath.Join(ws, "probe")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	return ws, &Env{Workspace: ws}, out, secret
}

// swapper keeps swapping ws/f.txt between a regular file and a symlink to
// the outside secret, and ws/d between a directory and a symlink to the
// outside directory, alternating absolute and relative links, until stop
// is closed.
func swapper(t *testing.T, ws, out string, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		f, tmp := filepath.Join(ws, "f.txt"), filepath.Join(ws, ".swap")
		targets := []string{filepath.Join(out, "secret.txt"), "../out/secret.txt"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(tmp)
			if err := os.Symlink(targets[i%2], tmp); err == nil {
				os.Rename(tmp, f) // f.txt is now a link leading outside
			}
			os.WriteFile(tmp, []byte("harmless needle\n"), 0o644)
			os.Rename(tmp, f) // and a regular file again
		}
	}()
	go func() {
		defer wg.Done()
		d, away := filepath.Join(ws, "d"), filepath.Join(ws, ".d-away")
		targets := []string{out, "../out"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if os.Rename(d, away) == nil {
				os.Symlink(targets[i%2], d) // d now leads outside
				os.Remove(d)
				os.Rename(away, d) // and is the real directory again
			}
		}
	}()
	return &wg
}

// TestReadToolsResistSymlinkRace checks that read_file and grep never
// return a file outside the workspace, even while a concurrent process
// swaps a file or a directory of the workspace for a symlink leading out
// between the tools' check and their open.
func TestReadToolsResistSymlinkRace(t *testing.T) {
	ws, env, out, secret := raceSetup(t)
	stop := make(chan struct{})
	wg := swapper(t, ws, out, stop)
	defer wg.Wait()
	defer close(stop)

	calls := []struct {
		tool Tool
		args map[string]any
	}{
		{ReadFile(), map[string]any{"path": "f.txt"}},
		{ReadFile(), map[string]any{"path": "d/f.txt"}},
		{Grep(), map[string]any{"pattern": "needle", "path": "f.txt"}},
		{Grep(), map[string]any{"pattern": "needle", "path": "d/f.txt"}},
		{Grep(), map[string]any{"pattern": "needle"}},
		{Grep(), map[string]any{"pattern": "needle", "path": "d"}},
		{ListDir(), map[string]any{"path": "d"}},
	}
	ok := 0
	for i := range 400 {
		for _, c := range calls {
			res := call(t, c.tool, env, c.args)
			if strings.Contains(res.Content, secret) || strings.Contains(res.Content, "TOP-SECRET") {
				t.Fatalf("round %d: %s %v returned the secret outside the workspace:\n%s", i, c.tool.Spec().Name, c.args, res.Content)
			}
			if !res.IsError {
				ok++
			}
		}
	}
	if ok == 0 {
		t.Error("no call succeeded; the race test did not exercise the tools")
	}
}

// TestWriteToolsResistSymlinkRace checks that write_file and edit_file never
// write outside the workspace while ws/d and ws/f.txt are swapped for
// symlinks leading out.
func TestWriteToolsResistSymlinkRace(t *testing.T) {
	ws, env, out, secret := raceSetup(t)
	stop := make(chan struct{})
	wg := swapper(t, ws, out, stop)

	calls := []struct {
		tool Tool
		args map[string]any
	}{
		{WriteFile(), map[string]any{"path": "d/new.txt", "content": "pwned"}},
		{WriteFile(), map[string]any{"path": "d/f.txt", "content": "pwned"}},
		{WriteFile(), map[string]any{"path": "d/sub/deeper.txt", "content": "pwned"}},
		{WriteFile(), map[string]any{"path": "f.txt", "content": "harmless needle\n"}},
		{EditFile(), map[string]any{"path": "d/f.txt", "old_string": "harmless", "new_string": "pwned", "replace_all": true}},
		{EditFile(), map[string]any{"path": "f.txt", "old_string": "TOP-SECRET", "new_string": "pwned", "replace_all": true}},
	}
	for i := range 200 {
		for _, c := range calls {
			res := call(t, c.tool, env, c.args)
			if strings.Contains(res.Content, "TOP-SECRET") {
				t.Fatalf("round %d: %s returned outside content:\n%s", i, c.tool.Spec().Name, res.Content)
			}
		}
	}
	close(stop)
	wg.Wait()

	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "f.txt,secret.txt" {
		t.Errorf("files were created outside the workspace: %v", names)
	}
	for name, want := range map[string]string{"secret.txt": secret + "\n", "f.txt": secret + " harmless\n"} {
		if got, _ := os.ReadFile(filepath.Join(out, name)); string(got) != want {
			t.Errorf("outside file %s changed to %q", name, got)
		}
	}
}
